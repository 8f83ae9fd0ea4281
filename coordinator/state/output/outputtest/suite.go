// Package outputtest is the behaviour every output.Store must have,
// as one table-driven suite that each implementation's tests run.
package outputtest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// Open returns an empty store for one subtest.
type Open func(t *testing.T) output.Store

// rec is a record of task output numbered n.
func rec(n int, data string) output.Record {
	return output.Record{Attempt: 1, Stream: "stdout", Seq: int64(n), Data: data, Time: time.Unix(int64(1000+n), 0).UTC()}
}

func add(task string, r output.Record) output.Op {
	return output.Op{TaskID: task, Record: r}
}
func del(task string) output.Op { return output.Op{TaskID: task, Delete: true} }

// Run runs the suite against stores open returns.
func Run(t *testing.T, open Open) {
	t.Run("read", func(t *testing.T) { testRead(t, open) })
	t.Run("delete", func(t *testing.T) { testDelete(t, open) })
	t.Run("capture round trip", func(t *testing.T) { testRoundTrip(t, open) })
	t.Run("capture isolated", func(t *testing.T) { testCaptureIsolated(t, open) })
	t.Run("bad section", func(t *testing.T) { testBadSection(t, open) })
}

func mustWrite(t *testing.T, s output.Store, ops ...output.Op) {
	t.Helper()
	if err := s.Write(ops); err != nil {
		t.Fatalf("write: %v", err)
	}
}

func testRead(t *testing.T, open Open) {
	s := open(t)
	mustWrite(t, s, add("t1", rec(1, "aaaa")), add("t2", rec(1, "x")), add("t1", rec(2, "bbbb")), add("t1", rec(3, "cccc")))
	mustWrite(t, s, add("t1", rec(4, strings.Repeat("d", 10))))
	cases := []struct {
		name      string
		task      string
		from, max int
		want      []int // seqs
	}{
		{"all", "t1", 0, 1 << 20, []int{1, 2, 3, 4}},
		{"from cursor", "t1", 2, 1 << 20, []int{3, 4}},
		{"bounded page", "t1", 0, 8, []int{1, 2}},
		{"exact bound", "t1", 1, 8, []int{2, 3}},
		{"one record past the bound", "t1", 3, 1, []int{4}},
		{"at the end", "t1", 4, 100, nil},
		{"past the end", "t1", 9, 100, nil},
		{"negative cursor", "t1", -1, 4, []int{1}},
		{"other task", "t2", 0, 100, []int{1}},
		{"unknown task", "t9", 0, 100, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := s.Read(c.task, c.from, c.max)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int
			for _, r := range got {
				seqs = append(seqs, int(r.Seq))
			}
			if !slices.Equal(seqs, c.want) {
				t.Errorf("Read(%s, %d, %d) = seqs %v, want %v", c.task, c.from, c.max, seqs, c.want)
			}
		})
	}
	got, _ := s.Read("t1", 0, 100)
	if got[0] != rec(1, "aaaa") {
		t.Errorf("record read back as %+v", got[0])
	}
	for task, want := range map[string]int{"t1": 4, "t2": 1, "t9": 0} {
		if n, err := s.Count(task); err != nil || n != want {
			t.Errorf("Count(%s) = %d, %v; want %d", task, n, err, want)
		}
	}
}

func testDelete(t *testing.T, open Open) {
	s := open(t)
	mustWrite(t, s, add("t1", rec(1, "a")), add("t2", rec(1, "b")))
	// One write: t1 removed, appended to again (a fresh start), and a
	// task with no output removed.
	mustWrite(t, s, del("t1"), del("t3"), add("t1", rec(7, "new")))
	got, _ := s.Read("t1", 0, 100)
	if len(got) != 1 || got[0].Seq != 7 {
		t.Errorf("t1 after delete and append: %+v", got)
	}
	mustWrite(t, s, del("t1"))
	if n, _ := s.Count("t1"); n != 0 {
		t.Errorf("t1 holds %d records after delete", n)
	}
	if n, _ := s.Count("t2"); n != 1 {
		t.Errorf("t2 holds %d records, want 1 (not deleted)", n)
	}
}

// Capture returns s's output section as a capture of it writes it, and
// checks that WriteTo counts what it wrote.
func Capture(t *testing.T, s output.Store) []byte {
	t.Helper()
	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var b bytes.Buffer
	n, err := c.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, b.Len())
	}
	return b.Bytes()
}

func testRoundTrip(t *testing.T, open Open) {
	src := open(t)
	for i := range 50 {
		mustWrite(t, src, add(fmt.Sprintf("task-%02d", i%7), rec(i, strings.Repeat("z", i))))
	}
	mustWrite(t, src, add("b", rec(1, "")), add("a", rec(1, "first")))
	section := Capture(t, src)

	dst := open(t)
	mustWrite(t, dst, add("old", rec(1, "replaced")))
	prep, err := dst.Prepare(bytes.NewReader(section))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := dst.Count("a"); n != 0 {
		t.Error("prepared output visible before Commit")
	}
	wantTasks := []string{"a", "b", "task-00", "task-01", "task-02", "task-03", "task-04", "task-05", "task-06"}
	if got := prep.Tasks(); !slices.Equal(got, wantTasks) {
		t.Errorf("Tasks = %v, want %v", got, wantTasks)
	}
	if err := prep.Commit(); err != nil {
		t.Fatal(err)
	}
	if again := Capture(t, dst); !bytes.Equal(again, section) {
		t.Errorf("restored store captures differently:\n%s\nwant\n%s", again, section)
	}
	if n, _ := dst.Count("old"); n != 0 {
		t.Error("restore kept output the section does not hold")
	}
	if n, _ := dst.Count("task-00"); n != 8 {
		t.Errorf("task-00 counts %d records after restore, want 8", n)
	}
	mustWrite(t, dst, add("a", rec(2, "after")))
	if got, _ := dst.Read("a", 1, 100); len(got) != 1 || got[0].Data != "after" {
		t.Errorf("append after restore: %+v", got)
	}
}

func testCaptureIsolated(t *testing.T, open Open) {
	s := open(t)
	mustWrite(t, s, add("t1", rec(1, "one")), add("t2", rec(1, "two")))
	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	mustWrite(t, s, add("t1", rec(2, "later")), del("t2"), add("t3", rec(1, "new")))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	fresh := open(t)
	mustWrite(t, fresh, add("t1", rec(1, "one")), add("t2", rec(1, "two")))
	if want := Capture(t, fresh); !bytes.Equal(b.Bytes(), want) {
		t.Errorf("capture saw later writes:\n%s\nwant\n%s", b.Bytes(), want)
	}
}

func testBadSection(t *testing.T, open Open) {
	good := open(t)
	mustWrite(t, good, add("t1", rec(1, "one")), add("t1", rec(2, "two")))
	section := Capture(t, good)
	cases := []struct {
		name    string
		section string
	}{
		{"cut inside a record", string(section[:len(section)-5])},
		{"not JSON", "hello\n"},
		{"not an object", `["t1"]` + "\n"},
		{"no task id", `{"task":"","seq":1}` + "\n"},
		{"task id too long", `{"task":"` + strings.Repeat("x", output.MaxTaskID+1) + `"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			mustWrite(t, s, add("keep", rec(1, "kept")))
			if prep, err := s.Prepare(strings.NewReader(c.section)); err == nil {
				prep.Discard()
				t.Fatal("bad section prepared")
			}
			if got, _ := s.Read("keep", 0, 100); len(got) != 1 || got[0].Data != "kept" {
				t.Errorf("output after a refused section: %+v", got)
			}
		})
	}
}
