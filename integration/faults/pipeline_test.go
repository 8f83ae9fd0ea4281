package faults

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// TestChecksSeeInjectedAnomalies runs one schedule, then plants anomalies
// in what it recorded and checks that the checks catch each: the model
// and its unit tests are only worth something if the history reaches them
// whole (partitioned by the right task, with the right times and answers).
func TestChecksSeeInjectedAnomalies(t *testing.T) {
	var out outcomeOf
	bg := &background{}
	t.Run("schedule", func(t *testing.T) {
		out = runSchedule(t, newPlan(7), bg)
		// The campaign reports what the schedule finds; here it only
		// has to give a history that passes at the level tampered with.
		checked := out
		checked.callViolations = nil
		reportSchedule(t, newPlan(7), checked)
	})
	defer bg.wait()
	if t.Failed() {
		return
	}
	linearizable := func(recs []record) bool {
		return len(checkLinearizable(buildHistory(recs, out.keyTask, byRequest), 10*time.Second)) == 0
	}
	if !linearizable(out.recs) {
		t.Fatal("the schedule's own history does not pass")
	}
	last := func(kind opKind, ok func(record) bool) int {
		for i := len(out.recs) - 1; i >= 0; i-- {
			r := out.recs[i]
			if r.in.Kind == kind && r.ended && !r.out.Unknown && !r.drop && ok(r) {
				return i
			}
		}
		t.Fatalf("no %s to tamper with", kind)
		return -1
	}
	tamper := func(f func(recs []record)) []record {
		recs := slices.Clone(out.recs)
		f(recs)
		return recs
	}

	// A final read that shows the job as it was first submitted.
	recs := tamper(func(recs []record) {
		i := last(opRead, func(r record) bool { return r.out.View != nil && terminal(r.out.View.State) })
		recs[i].out.View = &obsTask{JobState: api.TaskPending, State: api.TaskPending}
	})
	if linearizable(recs) {
		t.Error("a final read showing a finished task pending again passed")
	}

	// An acquire answered with an attempt number one past the truth: the
	// model takes the missing one for a ghost, and the reads must refute it.
	recs = tamper(func(recs []record) {
		i := last(opAcquire, func(r record) bool { return r.in.Task != "" })
		recs[i].out.Number++
	})
	if linearizable(recs) {
		t.Error("an acquire answered with a wrong attempt number passed")
	}

	// An accepted finish of an attempt other than the one that won.
	i := last(opFinish, func(r record) bool { return r.out.Code == "" && r.out.View != nil })
	forged := out.recs[i]
	forged.in.Attempt, forged.in.Submission = "forged", "forged-finish"
	forged.call, forged.ret = forged.ret+1, forged.ret+2
	recs = append(slices.Clone(out.recs), forged)
	if linearizable(recs) {
		t.Error("a second accepted finish, of an attempt never handed out, passed")
	}
	if p := checkInvariants(recs, out.final, false); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "different attempts were accepted") }) {
		t.Errorf("the invariants missed two accepted finishes: %q", p)
	}

	// A final view that lost an accepted finish.
	final := map[string]api.Job{}
	for id, j := range out.final {
		final[id] = j
	}
	id := jobOf(out.recs[i].in.Task)
	j := final[id]
	j.Tasks = slices.Clone(j.Tasks)
	j.Tasks[0].State, j.Tasks[0].ExitCode = api.TaskPending, nil
	final[id] = j
	if p := checkInvariants(out.recs, final, false); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "is not kept") }) {
		t.Errorf("the invariants missed a lost finish: %q", p)
	}
}
