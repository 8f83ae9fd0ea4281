package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// outputFixture is a store with job j's tasks j-a and j-b running on w1.
func outputFixture(t *testing.T) *Store {
	t.Helper()
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), submit("j", 2, 0),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att-a", Now: at(2)},
		command.AssignTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "att-b", Now: at(2)})
	return s
}

// chunk is task's next chunk of output under total bound limit.
type chunk struct {
	task  string
	data  string
	limit int
}

func appendCmd(task string, seq int, data string, limit int) command.AppendLogs {
	return command.AppendLogs{TaskID: task, WorkerID: "w1", AttemptID: "att-" + strings.TrimPrefix(task, "j-"), Stream: "stdout", Seq: int64(seq), Data: data, Now: at(3), MaxOutputBytes: limit}
}

// stored is what the store keeps of task's output.
func stored(t *testing.T, s *Store, task string) []string {
	t.Helper()
	recs, err := s.output.Read(task, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Data)
	}
	return out
}

func TestOutputBounds(t *testing.T) {
	big := strings.Repeat("x", MaxLogBytesPerTask-1)
	cases := []struct {
		name   string
		chunks []chunk
		want   map[string][]string
		total  int
	}{
		{"within the bounds", []chunk{{"j-a", "one\n", 0}, {"j-b", "two\n", 100}},
			map[string][]string{"j-a": {"one\n"}, "j-b": {"two\n"}}, 8},
		{"task bound: one marker, then nothing", []chunk{{"j-a", big, 0}, {"j-a", "ab", 0}, {"j-a", "c", 0}},
			map[string][]string{"j-a": {big, TaskOutputMarker}}, MaxLogBytesPerTask},
		{"total bound: a marker per task, then nothing", []chunk{{"j-a", "123456", 10}, {"j-b", "12345", 10}, {"j-b", "1", 10}, {"j-a", "1234", 10}, {"j-a", "5", 10}, {"j-a", "6", 10}},
			map[string][]string{"j-a": {"123456", "1234", TotalOutputMarker}, "j-b": {TotalOutputMarker}}, 10},
		{"total bound raised: a cut task stays cut", []chunk{{"j-a", "123", 2}, {"j-a", "4", 100}, {"j-b", "5", 100}},
			map[string][]string{"j-a": {TotalOutputMarker}, "j-b": {"5"}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := outputFixture(t)
			for i, ch := range c.chunks {
				mustApply(t, s, appendCmd(ch.task, i+1, ch.data, ch.limit))
			}
			for task, want := range c.want {
				if got := stored(t, s, task); !slices.Equal(got, want) {
					t.Errorf("%s keeps %q, want %q", task, short(got), short(want))
				}
			}
			if s.outputBytes != c.total {
				t.Errorf("total counted %d, want %d", s.outputBytes, c.total)
			}
		})
	}
}

func short(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if len(s) > 20 {
			s = fmt.Sprintf("%s...(%d bytes)", s[:8], len(s))
		}
		out[i] = s
	}
	return out
}

// The garbage collector takes a removed task's output off the total, in
// the same Apply that removes its records.
func TestCollectedOutputFreesTheTotal(t *testing.T) {
	s := outputFixture(t)
	mustApply(t, s, appendCmd("j-a", 1, "12345678", 10),
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att-a", Now: at(4)},
		command.FinishTask{TaskID: "j-b", WorkerID: "w1", AttemptID: "att-b", Now: at(4)},
		submit("k", 1, 0),
		command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "att-k", Now: at(5)})
	more := command.AppendLogs{TaskID: "k-a", WorkerID: "w1", AttemptID: "att-k", Seq: 1, Data: "abcd", Now: at(6), MaxOutputBytes: 10}
	mustApply(t, s, more)
	if got := stored(t, s, "k-a"); !slices.Equal(got, []string{TotalOutputMarker}) {
		t.Fatalf("k-a over the total keeps %q", got)
	}
	mustApply(t, s, command.CollectGarbage{Now: at(1000), OlderThan: 1})
	if s.outputBytes != 0 || len(stored(t, s, "j-a")) != 0 {
		t.Errorf("after GC: total %d, j-a keeps %q", s.outputBytes, stored(t, s, "j-a"))
	}
}

// LogsPage reads a job's output a bounded page at a time, in task order,
// and the pages together are the whole output, each record once.
func TestLogsPages(t *testing.T) {
	s := outputFixture(t)
	var want []string
	for i := range 20 {
		task := []string{"j-a", "j-b"}[i%2]
		data := fmt.Sprintf("line %02d %s\n", i, strings.Repeat("-", i))
		mustApply(t, s, appendCmd(task, i+1, data, 0))
	}
	want = append(want, stored(t, s, "j-a")...)
	want = append(want, stored(t, s, "j-b")...)
	for _, max := range []int{1, 40, 100, 1 << 20} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			var got []string
			var cursor LogCursor
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("pages never end")
				}
				p, err := s.LogsPage("j", cursor, max)
				if err != nil {
					t.Fatal(err)
				}
				size := 0
				for _, l := range p.Lines {
					got = append(got, l.Data)
					size += len(l.Data)
				}
				if len(p.Lines) > 1 && size > max {
					t.Errorf("page of %d bytes over %d", size, max)
				}
				if p.Ended {
					t.Error("a running job's page says ended")
				}
				cursor = p.Next
				if !p.More {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("pages read %d records, want %d:\n%q\n%q", len(got), len(want), got, want)
			}
			if p, _ := s.LogsPage("j", cursor, max); len(p.Lines) != 0 || p.More {
				t.Errorf("caught up, a page still reads %d records (more %v)", len(p.Lines), p.More)
			}
		})
	}
}

// The output restored with a snapshot counts toward the total again.
func TestRestoreWithOutputRebuildsTheTotal(t *testing.T) {
	s := outputFixture(t)
	mustApply(t, s, appendCmd("j-a", 1, "123456", 0))
	r := New()
	if err := r.RestoreWithOutput(bytes.NewReader(snapshotBytes(t, s)), prepared(t, r, s)); err != nil {
		t.Fatal(err)
	}
	mustApply(t, r, appendCmd("j-b", 1, "12345", 10))
	if got := stored(t, r, "j-b"); !slices.Equal(got, []string{TotalOutputMarker}) {
		t.Errorf("j-b after restore keeps %q, want the total's marker", got)
	}
	if got := stored(t, r, "j-a"); !slices.Equal(got, []string{"123456"}) {
		t.Errorf("j-a after restore keeps %q", got)
	}
}

// Restore alone counts the restored tasks' output toward the total, as
// RestoreWithOutput does.
func TestRestoreCountsTheTotal(t *testing.T) {
	s := outputFixture(t)
	mustApply(t, s, appendCmd("j-a", 1, "123456", 0), appendCmd("j-b", 1, "789", 0))
	r := New()
	if err := r.Restore(bytes.NewReader(snapshotBytes(t, s))); err != nil {
		t.Fatal(err)
	}
	if r.outputBytes != 9 {
		t.Errorf("restored total %d, want 9", r.outputBytes)
	}
}

// prepared is src's output, captured and prepared for dst.
func prepared(t *testing.T, dst, src *Store) output.Restore {
	t.Helper()
	c, err := src.CaptureOutput()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	p, err := dst.PrepareOutput(&b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Output of a task the store section lacks is refused, and so is a bad
// store section: neither the state nor the output changes.
func TestRestoreWithOutputRefusals(t *testing.T) {
	src := outputFixture(t)
	mustApply(t, src, appendCmd("j-a", 1, "from the snapshot", 0))
	other := New()
	mustApply(t, other, register("w1", "GPU-1"), submit("z", 1, 0),
		command.AssignTask{TaskID: "z-a", WorkerID: "w1", AttemptID: "att-z", Now: at(2)},
		command.AppendLogs{TaskID: "z-a", WorkerID: "w1", AttemptID: "att-z", Seq: 1, Data: "orphan", Now: at(3)})
	cases := []struct {
		name    string
		section []byte
		output  *Store
	}{
		{"output of a task the snapshot lacks", snapshotBytes(t, src), other},
		{"bad store section", []byte(`{"version":2}`), src},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := outputFixture(t)
			mustApply(t, s, appendCmd("j-b", 1, "kept", 0))
			before := snapshotBytes(t, s)
			err := s.RestoreWithOutput(bytes.NewReader(c.section), prepared(t, s, c.output))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("restore: %v, want invalid", err)
			}
			if after := snapshotBytes(t, s); !bytes.Equal(before, after) {
				t.Error("a refused restore changed the state")
			}
			if got := stored(t, s, "j-b"); !slices.Equal(got, []string{"kept"}) {
				t.Errorf("a refused restore changed the output: %q", got)
			}
		})
	}
}
