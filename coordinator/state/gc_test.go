package state

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// gcFixture: worker w1 with one GPU; jobs j0..j4 that each finished (their
// one task ran and ended) at 10, 20, 30, 40 and 50 s, and job live whose
// task still runs. j0's finish was under a submission id, j1 was submitted
// under an idempotency key.
func gcFixture(t *testing.T) *Store {
	t.Helper()
	s := New()
	mustApply(t, s, register("w1", "GPU-1"))
	for i, id := range []string{"j0", "j1", "j2", "j3", "j4"} {
		sub := submit(id, 1, 0)
		if id == "j1" {
			sub.Spec.IdempotencyKey = "nightly"
		}
		task, att := id+"-a", "att-"+id
		end := at(10 * (i + 1))
		mustApply(t, s, sub,
			command.AssignTask{TaskID: task, WorkerID: "w1", AttemptID: att, Now: end.Add(-time.Second), RequestID: "r-" + id},
			command.StartTask{TaskID: task, WorkerID: "w1", AttemptID: att, Now: end.Add(-time.Second)},
			command.AppendLogs{TaskID: task, WorkerID: "w1", AttemptID: att, Stream: "stdout", Seq: 1, Data: "out\n", Now: end},
			command.FinishTask{TaskID: task, WorkerID: "w1", AttemptID: att, SubmissionID: "fin-" + id, BodyHash: "b", ExitCode: 0, Now: end})
	}
	mustApply(t, s, submit("live", 1, 0),
		command.AssignTask{TaskID: "live-a", WorkerID: "w1", AttemptID: "att-live", Now: at(60), RequestID: "r-live"})
	return s
}

func jobIDs(s *Store) []string {
	var out []string
	page, _ := s.JobsPage(0, 0)
	for _, e := range page {
		out = append(out, e.Job.Job.ID)
	}
	slices.Sort(out)
	return out
}

func TestCollectGarbageRemovesFinishedJobsByAgeAndCount(t *testing.T) {
	cases := []struct {
		name     string
		gc       command.CollectGarbage
		removed  int
		more     bool
		leftJobs []string
	}{
		{"older than 25 s at 50 s: j0, j1", command.CollectGarbage{Now: at(50), OlderThan: 25 * time.Second}, 2, false,
			[]string{"j2", "j3", "j4", "live"}},
		{"keep the 2 newest finished", command.CollectGarbage{Now: at(50), OlderThan: time.Hour, KeepFinished: 2}, 3, false,
			[]string{"j3", "j4", "live"}},
		{"a limit leaves the rest for the next round", command.CollectGarbage{Now: at(100), OlderThan: time.Second, Limit: 2}, 2, true,
			[]string{"j2", "j3", "j4", "live"}},
		{"nothing due", command.CollectGarbage{Now: at(50), OlderThan: time.Hour}, 0, false,
			[]string{"j0", "j1", "j2", "j3", "j4", "live"}},
		{"a running job is never removed", command.CollectGarbage{Now: at(1000), OlderThan: 0, KeepFinished: 1}, 5, false,
			[]string{"live"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := gcFixture(t)
			r := apply(t, s, c.gc)
			out, err := OutcomeOf[GCOutcome](r)
			if err != nil {
				t.Fatal(err)
			}
			if out.Removed != c.removed || out.More != c.more {
				t.Fatalf("outcome %+v, want removed %d more %v", out, c.removed, c.more)
			}
			if got := jobIDs(s); !slices.Equal(got, c.leftJobs) {
				t.Fatalf("jobs left %v, want %v", got, c.leftJobs)
			}
			roundTrip(t, s)
		})
	}
}

// A removed job leaves nothing behind: reads of it answer not found, its
// finish record and idempotency key are gone (the key may name a new
// job), and an acquire replay cannot hand out its task again.
func TestCollectedJobsLeaveNothingBehind(t *testing.T) {
	s := gcFixture(t)
	mustApply(t, s, command.CollectGarbage{Now: at(1000), OlderThan: time.Second})
	for _, id := range []string{"j0", "j1", "j2", "j3", "j4"} {
		if _, err := s.Job(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("job %s after GC: %v, want not found", id, err)
		}
		if _, err := s.LogsPage(id, nil, 0); !errors.Is(err, ErrNotFound) {
			t.Errorf("logs of %s after GC: %v, want not found", id, err)
		}
	}
	s.mu.RLock()
	for key := range s.submissions.All() {
		t.Errorf("finish record %s kept", key)
	}
	for key := range s.idempotency.All() {
		t.Errorf("idempotency key %s kept", key)
	}
	for _, id := range []string{"j0-a", "j4-a"} {
		if _, ok := s.tasks.Lookup(id); ok {
			t.Errorf("task %s kept", id)
		}
		if n, _ := s.output.Count(id); n != 0 {
			t.Errorf("output of %s kept: %d records", id, n)
		}
	}
	s.mu.RUnlock()

	again := submit("j9", 1, 0)
	again.Spec.IdempotencyKey = "nightly"
	out, err := OutcomeOf[SubmitOutcome](apply(t, s, again))
	if err != nil || !out.Created || out.Job.Job.ID != "j9" {
		t.Fatalf("resubmit under a collected job's key: %+v %v, want a new job", out, err)
	}
	if _, err := s.Job("live"); err != nil {
		t.Fatalf("the running job: %v", err)
	}
}

func TestCollectGarbageRefusesNegativeBounds(t *testing.T) {
	s := gcFixture(t)
	before := snapshotBytes(t, s)
	if r := apply(t, s, command.CollectGarbage{Now: at(50), OlderThan: -time.Second}); !errors.Is(r.Err(), ErrInvalid) {
		t.Fatalf("negative age: %v", r.Err())
	}
	if after := snapshotBytes(t, s); string(after) != string(before) {
		t.Fatal("a refused collection changed the state")
	}
}
