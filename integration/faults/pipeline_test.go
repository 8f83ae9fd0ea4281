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

	// The checks of done work and superseded reports pass the schedule's
	// own history, and see what is planted in it.
	if p, _ := checkDoneWork(out.recs, out.events); len(p) > 0 {
		t.Errorf("the schedule's own history fails the check of done work: %q", p)
	}
	if p := checkSuperseded(out.recs); len(p) > 0 {
		t.Errorf("the schedule's own history fails the check of superseded reports: %q", p)
	}
	// Done work run again: a task whose run ended with 0 and whose report
	// was accepted is started by another attempt.
	accepted := map[string]bool{}
	for _, e := range out.events {
		if e.kind == evSettled && e.verdict == "accepted" {
			accepted[e.attempt] = true
		}
	}
	k := slices.IndexFunc(out.events, func(e event) bool { return e.kind == evRunEnd && e.exit == 0 && accepted[e.attempt] })
	if k < 0 {
		t.Fatal("no run ended with 0 and accepted to tamper with")
	}
	e := out.events[k]
	again := record{client: 2, in: opInput{Kind: opStart, Task: e.task, Attempt: "again", Worker: "w2"}, call: e.at + 1, ret: e.at + 2, ended: true}
	if p, _ := checkDoneWork(append(slices.Clone(out.recs), again), out.events); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "ran again after it was done") }) {
		t.Errorf("the check of done work missed a done task run again: %q", p)
	}
	// Its report refused instead, with no fault on its worker.
	events := slices.Clone(out.events)
	for i := range events {
		if events[i].kind == evSettled && events[i].attempt == e.attempt {
			events[i].verdict = string(api.CodeStaleAttempt)
		}
	}
	if p, _ := checkDoneWork(out.recs, events); !slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "done work was discarded") }) {
		t.Errorf("the check of done work missed a done task's report refused: %q", p)
	}
	// A superseded report taken: a later attempt of the task handed out
	// just before the accepted finish was sent.
	fin := out.recs[i]
	number := 0
	for _, r := range out.recs {
		if r.in.Kind == opAcquire && r.in.Attempt == fin.in.Attempt {
			number = r.out.Number
		}
	}
	later := record{client: 2, in: opInput{Kind: opAcquire, Task: fin.in.Task, Attempt: "later", Worker: "w2"}, out: opOutput{Number: number + 1}, call: fin.call - 2, ret: fin.call - 1, ended: true}
	if p := checkSuperseded(append(slices.Clone(out.recs), later)); len(p) == 0 {
		t.Error("the check of superseded reports missed an accepted finish of a superseded attempt")
	}
}
