package state

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func submitAs(s *Store, owner, id string, limit int) Result {
	return s.Apply(command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: owner, Now: t0, MaxPendingJobs: limit}).(Result)
}

// Finding 6 (quotas): two submissions racing for a client's last slot are
// two entries of one log; whichever applies second is refused, on every
// replica, and a slot frees when a job ends.
func TestPendingQuotaIsDecidedInApply(t *testing.T) {
	s := New()
	a, _ := command.Encode(command.SubmitJob{JobID: "ja", TaskIDs: []string{"ja-0"}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: "ci", Now: t0, MaxPendingJobs: 1})
	b, _ := command.Encode(command.SubmitJob{JobID: "jb", TaskIDs: []string{"jb-0"}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: "ci", Now: t0, MaxPendingJobs: 1})
	out := s.Apply(command.Batch{Entries: [][]byte{a, b}}).([]Result)
	if out[0].Err() != nil || !errors.Is(out[1].Err(), ErrQuotaExceeded) {
		t.Fatalf("racing submissions: %v / %v, want one accepted and one over quota", out[0].Err(), out[1].Err())
	}
	if _, err := s.Job("jb"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused job exists: %v", err)
	}
	if res := submitAs(s, "other", "jo", 1); res.Err() != nil {
		t.Fatalf("another client's quota is its own: %v", res.Err())
	}
	if res := s.Apply(command.CancelJob{JobID: "ja", By: "ci", Now: t0}).(Result); res.Err() != nil {
		t.Fatal(res.Err())
	}
	if res := submitAs(s, "ci", "jc", 1); res.Err() != nil {
		t.Fatalf("after the job ended: %v", res.Err())
	}
	if res := submitAs(s, "ci", "jd", 0); res.Err() != nil {
		t.Fatalf("an entry without a limit (written before quotas): %v", res.Err())
	}
}

// The index is rebuilt after a restore and decides the same.
func TestPendingQuotaAfterRestore(t *testing.T) {
	s := New()
	for i := range 3 {
		if res := submitAs(s, "ci", fmt.Sprintf("j%d", i), 3); res.Err() != nil {
			t.Fatal(res.Err())
		}
	}
	s.Apply(command.CancelJob{JobID: "j0", By: "ci", Now: t0})
	r, _ := roundTrip(t, s)
	for _, st := range []*Store{s, r} {
		if res := submitAs(st, "ci", "j3", 3); res.Err() != nil {
			t.Fatalf("a freed slot: %v", res.Err())
		}
		if res := submitAs(st, "ci", "j4", 3); !errors.Is(res.Err(), ErrQuotaExceeded) {
			t.Fatalf("over quota: %v", res.Err())
		}
	}
}

// Pages list jobs newest first, each once, and jobs created while paging
// do not shift the pages still to read.
func TestJobsPage(t *testing.T) {
	s := New()
	for i := range 7 {
		submitAs(s, "ci", fmt.Sprintf("j%d", i), 0)
	}
	var ids []string
	var before uint64
	for page := 0; ; page++ {
		jobs, more := s.JobsPage(before, 3)
		for _, e := range jobs {
			ids = append(ids, e.Job.Job.ID)
		}
		if page == 0 {
			submitAs(s, "ci", "late", 0)
		}
		if !more {
			break
		}
		before = jobs[len(jobs)-1].Seq
	}
	if fmt.Sprint(ids) != "[j6 j5 j4 j3 j2 j1 j0]" {
		t.Fatalf("pages listed %v", ids)
	}
	if jobs, more := s.JobsPage(0, 100); len(jobs) != 8 || jobs[0].Job.Job.ID != "late" || more {
		t.Fatalf("one page of everything: %d jobs, more %v", len(jobs), more)
	}
	// No bound on the count (limit 0 or below) lists everything below the
	// cursor, and never panics.
	for _, limit := range []int{0, -1} {
		if jobs, more := s.JobsPage(0, limit); len(jobs) != 8 || more {
			t.Fatalf("limit %d: %d jobs, more %v", limit, len(jobs), more)
		}
	}
	first, _ := s.JobsPage(0, 3)
	if jobs, more := s.JobsPage(first[2].Seq, 0); len(jobs) != 5 || more {
		t.Fatalf("limit 0 below a cursor: %d jobs, more %v", len(jobs), more)
	}
}

// The index is pruned only when its unpruned size reaches the limit, and
// decides as counting the open jobs would: random submissions under
// random limits and cancels, each decision checked against a count of
// the jobs not ended, and the set never larger than the largest limit.
func TestPendingQuotaDecidesAsACount(t *testing.T) {
	s := New()
	rng := rand.New(rand.NewPCG(3, 4))
	var open []string
	for i := range 3000 {
		if len(open) > 0 && rng.IntN(3) == 0 {
			k := rng.IntN(len(open))
			if res := s.Apply(command.CancelJob{JobID: open[k], By: "ci", Now: t0}).(Result); res.Err() != nil {
				t.Fatal(res.Err())
			}
			open = slices.Delete(open, k, k+1)
			continue
		}
		limit := 1 + rng.IntN(40)
		id := fmt.Sprintf("j%d", i)
		err := submitAs(s, "ci", id, limit).Err()
		switch over := len(open) >= limit; {
		case over && !errors.Is(err, ErrQuotaExceeded):
			t.Fatalf("submission %d: %d open, limit %d: %v, want over quota", i, len(open), limit, err)
		case !over && err != nil:
			t.Fatalf("submission %d: %d open, limit %d: %v", i, len(open), limit, err)
		case !over:
			open = append(open, id)
		}
		if n := len(s.openJobs["ci"]); n > 40 {
			t.Fatalf("submission %d: the index holds %d jobs, over any limit", i, n)
		}
	}
}
