package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// examined runs the matcher as Match does and reports how many pending
// tasks it looked at.
func examined(t *testing.T, s *Store, workerID, narrow string) (string, int) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := place.Match(s.planView(), s.workers[workerID], narrow, 0, nil, time.Time{})
	if f.Task == nil {
		return "", f.Examined
	}
	return f.Task.ID, f.Examined
}

// Acquire cost must not grow with pending work the worker cannot take:
// 10,000 tasks for another executor, another worker, a group it is not in,
// or a capability it lacks are never looked at.
func TestMatchCostIgnoresWorkItCannotTake(t *testing.T) {
	build := func(noise int) *Store {
		s := New()
		w := register("w1")
		w.Capabilities = []string{"train"}
		mustApply(t, s, w, register("w2"), mkGroup("mine", wm("w1")), mkGroup("theirs", wm("w2")))
		kinds := []func(i int) command.SubmitJob{
			func(i int) command.SubmitJob {
				j := targeted(fmt.Sprintf("ex%d", i), 1, nil, "")
				j.Spec.Executor = "other"
				return j
			},
			func(i int) command.SubmitJob {
				return targeted(fmt.Sprintf("tw%d", i), 1, &command.Target{Kind: api.TargetWorker, ID: "w2"}, "")
			},
			func(i int) command.SubmitJob {
				return targeted(fmt.Sprintf("tg%d", i), 1, &command.Target{Kind: api.TargetGroup, ID: "theirs"}, "")
			},
			func(i int) command.SubmitJob { return targeted(fmt.Sprintf("cap%d", i), 1, nil, "infer") },
		}
		for i := range noise {
			mustApply(t, s, kinds[i%len(kinds)](i))
		}
		// The work w1 can take comes last, so a scan in queue order would
		// have to pass every task above first.
		mustApply(t, s,
			targeted("mine-untargeted", 1, nil, ""),
			targeted("mine-self", 1, &command.Target{Kind: api.TargetWorker, ID: "w1"}, "train"),
			targeted("mine-group", 1, &command.Target{Kind: api.TargetGroup, ID: "mine"}, ""),
		)
		return s
	}
	quiet, noisy := build(0), build(10000)
	if st := noisy.Stats(); st.Pending != 10003 {
		t.Fatalf("pending %d", st.Pending)
	}
	for _, narrow := range []string{"", "train"} {
		qid, qn := examined(t, quiet, "w1", narrow)
		nid, nn := examined(t, noisy, "w1", narrow)
		if qid != nid || nid == "" {
			t.Fatalf("narrow %q: quiet store picks %q, noisy store %q", narrow, qid, nid)
		}
		if nn != qn || nn > 3 {
			t.Fatalf("narrow %q: examined %d tasks with 10,000 non-matching pending, %d without", narrow, nn, qn)
		}
	}
	// w2 takes anything, so the noise for w2 is real work for it: the
	// matcher still looks only at the heads of its queues.
	if id, n := examined(t, noisy, "w2", ""); id == "" || n > 8 {
		t.Fatalf("w2: picked %q after examining %d tasks", id, n)
	}
}
