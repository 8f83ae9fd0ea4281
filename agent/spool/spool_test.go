package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func finish(task, attempt string, code int) Record {
	return Record{TaskID: task, AttemptID: attempt, Finish: &api.FinishRequest{AttemptID: attempt, SubmissionID: attempt + "-finish", ExitCode: code}, WrittenAt: time.Unix(1, 0).UTC()}
}

func fail(task, attempt, why string) Record {
	return Record{TaskID: task, AttemptID: attempt, Fail: &api.FailRequest{AttemptID: attempt, Reason: why}, WrittenAt: time.Unix(1, 0).UTC()}
}

func attempts(rs []Record) string {
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.AttemptID)
	}
	return strings.Join(ids, ",")
}

// What was put survives a restart (a new Open of the same directory), in
// the order it was put, and what was removed does not come back.
func TestRecordsSurviveReopenInOrder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	s, err := Open(dir, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{finish("t3", "a3", 0), fail("t1", "a1", "no GPU"), finish("t2", "a2", 7)} {
		if err := s.Put(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Remove("a1"); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := s2.Pending()
	if attempts(got) != "a3,a2" {
		t.Fatalf("pending after reopen = %s, want a3,a2", attempts(got))
	}
	if got[1].Finish == nil || got[1].Finish.ExitCode != 7 || got[1].TaskID != "t2" {
		t.Fatalf("record a2 = %+v", got[1])
	}
	// A record put after the reopen comes after those already there.
	if err := s2.Put(finish("t0", "a0", 0)); err != nil {
		t.Fatal(err)
	}
	if a := attempts(s2.Pending()); a != "a3,a2,a0" {
		t.Fatalf("pending = %s, want a3,a2,a0", a)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("spool dir mode %v %v, want 0700", fi.Mode().Perm(), err)
	}
}

// A second report of the same attempt replaces the first.
func TestPutReplacesTheAttemptsRecord(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, Limits{}, nil)
	if err := s.Put(fail("t1", "a1", "first")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(fail("t1", "a1", "second")); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := s2.Pending()
	if len(got) != 1 || got[0].Fail.Reason != "second" {
		t.Fatalf("pending = %+v, want a1's second record alone", got)
	}
	if n, b := s2.Len(); n != 1 || b <= 0 {
		t.Fatalf("Len = %d, %d", n, b)
	}
}

// A bound reached never drops a record: Put keeps it, Full says so, and a
// removal makes room again.
func TestBoundsMakeTheSpoolFullNeverLossy(t *testing.T) {
	cases := []struct {
		name   string
		limits Limits
		puts   int
	}{
		{"records", Limits{MaxRecords: 2}, 2},
		{"bytes", Limits{MaxBytes: 300}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := Open(t.TempDir(), tc.limits, nil)
			if err := s.Put(finish("t1", "a1", 0)); err != nil {
				t.Fatal(err)
			}
			if s.Full() {
				t.Fatal("full after one record")
			}
			for i := 2; i <= tc.puts+1; i++ {
				id := "a" + string(rune('0'+i))
				if err := s.Put(finish("t", id, 0)); err != nil {
					t.Fatal(err)
				}
			}
			if !s.Full() {
				n, b := s.Len()
				t.Fatalf("not full at %d records, %d bytes", n, b)
			}
			if n, _ := s.Len(); n != tc.puts+1 {
				t.Fatalf("%d records kept, want %d: a bound dropped one", n, tc.puts+1)
			}
			for _, r := range s.Pending() {
				if err := s.Remove(r.AttemptID); err != nil {
					t.Fatal(err)
				}
			}
			if s.Full() {
				t.Fatal("still full once emptied")
			}
		})
	}
}

// A file the disk corrupted is set aside, logged, and blocks none of the
// others; a temporary file a crash left is ignored.
func TestUnreadableFilesAreSetAside(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, Limits{}, nil)
	if err := s.Put(finish("t1", "a1", 0)); err != nil {
		t.Fatal(err)
	}
	bad := fileName(99, "a9")
	if err := os.WriteFile(filepath.Join(dir, bad), []byte(`{"task_id":"t9","attempt_id":"a9","fin`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "."+fileName(100, "a10")+".tmp-123"), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := attempts(s2.Pending()); a != "a1" {
		t.Fatalf("pending = %s, want a1", a)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+bad+".bad")); err != nil {
		t.Fatalf("the unreadable record was not set aside: %v", err)
	}
}

func TestPutRefusesBadRecords(t *testing.T) {
	s, _ := Open(t.TempDir(), Limits{}, nil)
	both := finish("t", "a", 0)
	both.Fail = &api.FailRequest{AttemptID: "a"}
	for _, r := range []Record{{TaskID: "t", AttemptID: "a"}, both, {AttemptID: "a", Finish: &api.FinishRequest{}}, {TaskID: "t", Fail: &api.FailRequest{}}} {
		if err := s.Put(r); !errors.Is(err, ErrBadRecord) {
			t.Fatalf("Put(%+v) = %v, want ErrBadRecord", r, err)
		}
	}
	if n, _ := s.Len(); n != 0 {
		t.Fatalf("%d records kept", n)
	}
}

// Peek reads another process's spool without touching it: a corrupt file
// is skipped and left where it is, a missing directory holds nothing.
func TestPeekReadsWithoutChanging(t *testing.T) {
	dir := t.TempDir()
	s, _ := Open(dir, Limits{}, nil)
	for _, a := range []string{"a1", "a2"} {
		if err := s.Put(finish("t-"+a, a, 0)); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "00000000000000000099-deadbeef.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Peek(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a := attempts(got); a != "a1,a2" {
		t.Fatalf("peek = %s, want a1,a2", a)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Fatalf("peek moved the unreadable file: %v", err)
	}
	if got, err := Peek(filepath.Join(dir, "absent")); err != nil || len(got) != 0 {
		t.Fatalf("peek of a missing dir = %v, %v", got, err)
	}
}
