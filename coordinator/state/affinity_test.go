package state

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// labelled registers a worker with labels.
func labelled(id string, labels map[string]string) command.RegisterWorker {
	r := register(id, "GPU-"+id)
	r.Credential.ID = "cred-" + id
	r.Labels = labels
	return r
}

// withAffinity is job j (count tasks, no GPU) with rules and spread.
func withAffinity(t *testing.T, count int, spread bool, rules ...command.AffinityRule) command.SubmitJob {
	t.Helper()
	j := submit("j", count, 0)
	if len(rules) > 0 {
		raw, err := json.Marshal(rules)
		if err != nil {
			t.Fatal(err)
		}
		j.Spec.Affinity = raw
	}
	j.Spec.Spread = spread
	return j
}

// Required rules filter workers in the state machine itself: a worker
// that breaks one is never matched and an assignment to it is refused.
func TestRequiredAffinityFilters(t *testing.T) {
	cases := []struct {
		name        string
		rule        command.AffinityRule
		good, wrong string
	}{
		{"label must match", command.AffinityRule{Label: "zone", Value: "b", Required: true}, "w2", "w1"},
		{"label present", command.AffinityRule{Label: "nvlink", Required: true}, "w1", "w2"},
		{"label must not match", command.AffinityRule{Label: "zone", Value: "b", Required: true, Weight: -1}, "w1", "w2"},
		{"worker named", command.AffinityRule{Worker: "w2", Required: true}, "w2", "w1"},
		{"not in group", command.AffinityRule{Group: "old", Required: true, Weight: -100}, "w2", "w1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, labelled("w1", map[string]string{"zone": "a", "nvlink": "yes"}), labelled("w2", map[string]string{"zone": "b"}),
				command.CreateGroup{GroupID: "old", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(1)},
				withAffinity(t, 1, false, c.rule))
			if _, ok, _ := s.Match(c.wrong, "", nil); ok {
				t.Fatalf("%s was matched against the rule", c.wrong)
			}
			if r := apply(t, s, command.AssignTask{TaskID: "j-a", WorkerID: c.wrong, AttemptID: "x", Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
				t.Fatalf("assigning to %s: %v, want conflict", c.wrong, r.Err())
			}
			if cand, ok, _ := s.Match(c.good, "", nil); !ok || cand.TaskID != "j-a" {
				t.Fatalf("%s was not matched", c.good)
			}
		})
	}
}

// Soft rules: within the affinity wait, a worker passes over a task that
// a live worker with a better score could take, and is told when to look
// again; past it, or with no better live worker, it takes the task.
func TestSoftAffinityWaitsForTheBestWorker(t *testing.T) {
	attract := command.AffinityRule{Label: "zone", Value: "b", Weight: 50}
	repel := command.AffinityRule{Group: "old", Weight: -50}
	for _, rule := range []command.AffinityRule{attract, repel} {
		s := New()
		mustApply(t, s, labelled("w1", map[string]string{"zone": "a"}), labelled("w2", map[string]string{"zone": "b"}),
			command.CreateGroup{GroupID: "old", Members: []command.GroupMember{{Kind: memberWorker, ID: "w1"}}, By: "admin", Now: at(1)},
			withAffinity(t, 1, false, rule))
		pendingSince := at(1) // the job's submit time
		within := pendingSince.Add(place.AffinityWait / 2)
		cand, ok, _ := s.MatchAt(within, "w1", "", 0, nil)
		if ok || !cand.RetryAt.Equal(pendingSince.Add(place.AffinityWait)) {
			t.Fatalf("%+v: w1 within the wait: ok %v, retry at %v", rule, ok, cand.RetryAt)
		}
		if _, ok, _ := s.MatchAt(within, "w2", "", 0, nil); !ok {
			t.Fatalf("%+v: the better worker was not matched", rule)
		}
		if _, ok, _ := s.MatchAt(pendingSince.Add(place.AffinityWait), "w1", "", 0, nil); !ok {
			t.Fatalf("%+v: past the wait the task still waits", rule)
		}
		// With the better worker offline, nobody better is live: w1 takes it.
		mustApply(t, s, command.SetWorkerStatus{WorkerID: "w2", Status: api.WorkerOffline, Now: at(2)})
		if _, ok, _ := s.MatchAt(within, "w1", "", 0, nil); !ok {
			t.Fatalf("%+v: w1 waited for an offline worker", rule)
		}
	}
}

// Spread: a worker that already runs a task of the job leaves the next to
// a live worker that runs fewer, within the wait.
func TestSpreadPrefersTheLessLoadedWorker(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1", "GPU-2"), labelled("w2", nil), withAffinity(t, 2, true),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: at(2)})
	within := at(1).Add(place.AffinityWait / 2)
	if _, ok, _ := s.MatchAt(within, "w1", "", 0, nil); ok {
		t.Fatal("w1 took a second task of a spread job while w2 runs none")
	}
	if cand, ok, _ := s.MatchAt(within, "w2", "", 0, nil); !ok || cand.TaskID != "j-b" {
		t.Fatalf("w2 was not given the second task: %+v %v", cand, ok)
	}
	if _, ok, _ := s.Match("w1", "", nil); !ok {
		t.Fatal("without a time (no waiting) w1 takes it")
	}
}

// A pending task whose required affinity no live worker meets says so.
func TestPendingReasonNamesTheRequiredAffinity(t *testing.T) {
	s := New()
	mustApply(t, s, labelled("w1", map[string]string{"zone": "a"}),
		withAffinity(t, 1, false, command.AffinityRule{Label: "zone", Value: "b", Required: true}))
	j, _ := s.Job("j")
	if want := "no live worker that can run it meets its required affinity (label zone=b)"; j.PendingReason != want {
		t.Fatalf("reason %q, want %q", j.PendingReason, want)
	}
}

// A job stored before the affinity's shape was checked (any JSON) keeps
// applying: it simply has no rules.
func TestOldAffinityShapeHasNoRules(t *testing.T) {
	s := New()
	j := submit("j", 1, 0)
	j.Spec.Affinity = json.RawMessage(`{"zone":"a"}`)
	mustApply(t, s, register("w1"), j)
	if _, ok, _ := s.Match("w1", "", nil); !ok {
		t.Fatal("a job with an old-shaped affinity cannot be placed")
	}
	r, _ := roundTrip(t, s)
	if _, ok, _ := r.Match("w1", "", nil); !ok {
		t.Fatal("after a snapshot round trip it cannot be placed")
	}
}
