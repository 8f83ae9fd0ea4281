package preemption

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

func candidates(f *fleet, ids ...string) []Candidate {
	var out []Candidate
	for _, id := range ids {
		t := f.tasks[id]
		out = append(out, Candidate{Task: t, Job: f.jobs[t.JobID]})
	}
	return out
}

// The plan takes the fewest victims: on w2 one task frees both GPUs a
// two-GPU task needs, where w1 would take two; it holds the devices for
// the victims' grace and the slack.
func TestPlanTakesTheFewestVictims(t *testing.T) {
	f := newFleet()
	w1, w2 := f.worker("w1", 2), f.worker("w2", 2)
	f.quota["research"] = 200
	f.busy(w1, "a", "ml", 0, 0)
	f.busy(w1, "b", "ml", 0, 1)
	f.busy(w2, "c", "ml", 0, 0, 1)
	f.job("r", "research", 2, 5, 1)
	now := t0.Add(time.Hour)
	o := Options{MinRuntime: time.Minute, HoldSlack: time.Minute}
	c, ok := Plan(f, candidates(f, "r-0"), now, o)
	if !ok {
		t.Fatal("no plan")
	}
	want := command.PreemptTasks{For: "r-0", WorkerID: "w2", MinRuntime: time.Minute, Now: now, TeamRoom: true,
		Victims: []command.Victim{{TaskID: "c-0", AttemptID: "att-c-0"}}, HoldUntil: now.Add(90 * time.Second)} // the default grace, 30 s, and the slack
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("plan = %+v\nwant %+v", c, want)
	}
}

// No plan for a task that fits as things are, nor for one no victim
// would make room for (the only other task may not be preempted).
func TestPlanLeavesWhatNeedsNone(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 2)
	f.quota["research"] = 200
	no := false
	f.job("a", "ml", 1, 0, 1).Spec.Preemptible = &no
	f.run("a-0", w, t0, 0)
	f.job("fits", "research", 1, 5, 1)
	f.job("wide", "research", 2, 5, 1)
	now := t0.Add(time.Hour)
	if c, ok := Plan(f, candidates(f, "fits-0"), now, Options{}); ok {
		t.Fatalf("a task that fits got a plan: %+v", c)
	}
	if !PlaceableNow(f, f.jobs["fits"], f.tasks["fits-0"], now, true) {
		t.Fatal("PlaceableNow: a free GPU is there")
	}
	f.held["GPU-w1-1"] = "wide-0"
	if PlaceableNow(f, f.jobs["fits"], f.tasks["fits-0"], now, true) {
		t.Fatal("PlaceableNow: the free GPU is held for another task")
	}
	delete(f.held, "GPU-w1-1")
	if c, ok := Plan(f, candidates(f, "wide-0"), now, Options{}); ok {
		t.Fatalf("a plan with a victim that may not be preempted: %+v", c)
	}
}

// A team at its ceiling takes its own team's lower-priority task, not
// another team's borrowed one: only its own victims make the room.
func TestPlanTakesOwnTeamFirstAtTheCeiling(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 2)
	// research holds 1 GPU of its quota and ceiling of 1.5: another
	// team's borrowed task is a victim by the policy, yet stopping it
	// would not make research's room; only its own task does.
	f.quota["research"] = 150
	f.ceiling["research"] = 150
	f.busy(w, "m", "ml", 0, 0)
	f.busy(w, "low", "research", 1, 1)
	f.job("r", "research", 1, 5, 1)
	now := t0.Add(time.Hour)
	c, ok := Plan(f, candidates(f, "r-0"), now, Options{MinRuntime: time.Minute})
	if !ok || len(c.Victims) != 1 || c.Victims[0].TaskID != "low-0" {
		t.Fatalf("plan = %+v, %v: want low-0 alone", c, ok)
	}
}

// A gang preempts only where every member then has a place, across as
// many workers as it takes; a gang that could never fit gets no plan.
func TestPlanGangAcrossWorkers(t *testing.T) {
	f := newFleet()
	var ws []*record.Worker
	for _, id := range []string{"w1", "w2", "w3"} {
		ws = append(ws, f.worker(id, 1))
	}
	f.quota["research"] = 300
	for i, w := range ws {
		id := string(rune('a' + i))
		f.job(id, "ml", 1, 0, 1)
		f.run(id+"-0", w, t0, 0)
	}
	g := f.job("g", "research", 1, 5, 2)
	now := t0.Add(time.Hour)
	gang := []Candidate{{Task: f.tasks["g-0"], Job: g, Gang: []*record.Task{f.tasks["g-0"], f.tasks["g-1"]}}}
	c, ok := Plan(f, gang, now, Options{MinRuntime: time.Minute})
	if !ok || len(c.Victims) != 2 || c.Victims[0].TaskID != "a-0" || c.Victims[1].TaskID != "b-0" || c.Victims[1].WorkerID != "w2" {
		t.Fatalf("gang plan = %+v, %v: want a-0 on w1 and b-0 on w2", c, ok)
	}
	gone := map[string]bool{"a-0": true, "b-0": true}
	if !GangFits(f, g, gang[0].Gang, gone, now) || GangFits(f, g, gang[0].Gang, nil, now) {
		t.Fatal("GangFits: the gang fits once a-0 and b-0 are gone, not before")
	}
	big := f.job("big", "research", 1, 5, 4)
	members := []*record.Task{f.tasks["big-0"], f.tasks["big-1"], f.tasks["big-2"], f.tasks["big-3"]}
	if c, ok := Plan(f, []Candidate{{Task: members[0], Job: big, Gang: members}}, now, Options{MinRuntime: time.Minute}); ok {
		t.Fatalf("a gang of four on three GPUs got a plan: %+v", c)
	}
}
