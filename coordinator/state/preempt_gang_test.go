package state

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state/jobhistory"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// gangFleet is a store of n workers w1..wn with two GPUs each (wK-G1,
// wK-G2), team ml (no quota: all it runs is borrowed) and team research
// (quota: six GPUs). ml runs one one-GPU task per GPU, m<K><G>, started
// at second started, save young, started at second 260.
func gangFleet(t *testing.T, n, started int, young string) *Store {
	t.Helper()
	s := New()
	mustApply(t, s,
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		command.CreateTeam{Name: "research", Settings: teamSettings(100, 600), By: "admin", Now: at(0)})
	for k := 1; k <= n; k++ {
		w := fmt.Sprintf("w%d", k)
		mustApply(t, s, register(w, w+"-G1", w+"-G2"))
		for g := 1; g <= 2; g++ {
			id := fmt.Sprintf("m%d%d", k, g)
			when := started
			if id == young {
				when = 260
			}
			mustApply(t, s, inTeam(submit(id, 1, 1), "ml"),
				command.AssignTask{TaskID: id + "-a", WorkerID: w, AttemptID: "att-" + id, Devices: []string{fmt.Sprintf("%s-G%d", w, g)}, Now: at(when)},
				command.StartTask{TaskID: id + "-a", WorkerID: w, AttemptID: "att-" + id, Now: at(when)})
		}
	}
	return s
}

// researchGang is a gang of research of count members, gpus each.
func researchGang(id string, count, gpus int) command.SubmitJob {
	c := inTeam(submit(id, count, gpus), "research")
	c.Spec.Gang = true
	c.Now = at(20)
	return c
}

// placeGang places gang job as w1's acquire would, at second when.
func placeGang(t *testing.T, s *Store, job string, when int) command.AssignGang {
	t.Helper()
	plan, ok := s.PlanGang("w1", "", 0, job)
	if !ok {
		t.Fatalf("gang %s not placed", job)
	}
	assign := gangCommand(s, "w1", plan)
	assign.Now = at(when)
	mustApply(t, s, assign)
	return assign
}

func victimWorkers(c command.PreemptTasks) map[string]int {
	out := map[string]int{}
	for _, v := range c.Victims {
		out[v.On(c.WorkerID)]++
	}
	return out
}

// Classic case: a gang under its team's quota preempts borrowed tasks on
// three workers, all at once, and is then placed whole on the GPUs freed
// for it.
func TestClassicGangPreemptsAcrossThreeWorkers(t *testing.T) {
	s := gangFleet(t, 3, 2, "")
	mustApply(t, s, researchGang("g", 3, 2))
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute})
	if !ok || c.For != "g-a" || len(c.Victims) != 6 {
		t.Fatalf("plan %v %+v, want six victims for gang g", ok, c)
	}
	if got := victimWorkers(c); got["w1"] != 2 || got["w2"] != 2 || got["w3"] != 2 {
		t.Fatalf("victims by worker %v, want two on each of three", got)
	}
	mustApply(t, s, c)
	for k := 1; k <= 3; k++ {
		if got := preempted(s, fmt.Sprintf("w%d", k)); len(got) != 2 {
			t.Fatalf("w%d told to stop %v", k, got)
		}
	}
	if again, ok := s.PlanPreemption(at(401), preemption.Options{MinRuntime: time.Minute}); ok {
		t.Fatalf("a second preemption while the gang's victims stop: %+v", again)
	}
	for k := 1; k <= 3; k++ {
		for g := 1; g <= 2; g++ {
			id := fmt.Sprintf("m%d%d", k, g)
			mustApply(t, s, command.FinishTask{TaskID: id + "-a", WorkerID: fmt.Sprintf("w%d", k), AttemptID: "att-" + id, ExitCode: 143, Now: at(410)})
		}
	}
	// ml's tasks are back in the queue, older than g; the held GPUs still
	// go to the gang, whole.
	plan, ok := s.PlanGang("w1", "", 0, "g")
	if !ok || len(plan) != 3 {
		t.Fatalf("gang plan after the preemption: %v %+v", ok, plan)
	}
	mustApply(t, s, gangCommand(s, "w1", plan))
	if got := states(s, "g-a", "g-b", "g-c"); strings.Join(got, ",") != "assigned,assigned,assigned" {
		t.Fatalf("gang members %v", got)
	}
}

// Classic case: a running gang is a victim whole. Preempting it stops
// every member; each ends preempted, using no attempt, with a reason
// naming the preemptor, and the gang goes back to the queue whole.
func TestClassicGangVictimRequeuedWhole(t *testing.T) {
	s := New()
	mustApply(t, s,
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		command.CreateTeam{Name: "research", Settings: teamSettings(100, 200), By: "admin", Now: at(0)},
		register("w1", "w1-G1", "w1-G2"), register("w2", "w2-G1", "w2-G2"))
	g := inTeam(gangJob("v", 2), "ml")
	g.Spec.Resources.GPUs = 2
	mustApply(t, s, g)
	assign := placeGang(t, s, "v", 2)
	for _, m := range assign.Members {
		mustApply(t, s, command.StartTask{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: m.AttemptID, Now: at(2)})
	}
	r := inTeam(submit("r", 1, 2), "research")
	r.Now = at(20)
	mustApply(t, s, r)
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute})
	if !ok || c.For != "r-a" || victimIDs(c) != "v-a,v-b" {
		t.Fatalf("plan %v %+v, want both members of v", ok, c)
	}
	// Naming one member alone is refused, and changes nothing.
	one := c
	one.Victims = one.Victims[:1]
	before := snapshotBytes(t, s)
	if res := apply(t, s, one); !errors.Is(res.Err(), preemption.ErrGangMember) {
		t.Fatalf("one member alone: %v", res.Err())
	}
	if string(snapshotBytes(t, s)) != string(before) {
		t.Fatal("a refused preemption changed the state")
	}
	mustApply(t, s, c)
	first := assign.Members[0]
	mustApply(t, s, command.FinishTask{TaskID: first.TaskID, WorkerID: first.WorkerID, AttemptID: first.AttemptID, ExitCode: 143, Now: at(410)})
	evs, _, err := s.JobEvents("v")
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, e := range evs {
		if e.Kind == jobhistory.AttemptPreemptionAsked && e.Attempt.PreemptedBy.JobID == "r" && e.Attempt.PreemptedBy.Team == "research" && e.At.Equal(at(400)) {
			asked++
		}
	}
	if asked != 2 {
		t.Fatalf("%d events name r's preemption of a member, want 2: %+v", asked, evs)
	}
	for _, id := range []string{"v-a", "v-b"} {
		v := task(t, s, id)
		a := v.Attempts[len(v.Attempts)-1]
		if v.State != taskPending || a.State != api.AttemptPreempted || v.AttemptsUsed() != 0 || !strings.Contains(a.Reason, "preempted by job r (team research)") {
			t.Fatalf("%s after the preemption: %s, attempt %+v", id, v.State, a)
		}
	}
}

// Classic case: no preemption when the gang would still not fit: three
// members of two GPUs, and only two workers' borrowed GPUs to take.
func TestClassicGangNoPreemptionWhenItWouldNotFit(t *testing.T) {
	s := gangFleet(t, 2, 2, "")
	mustApply(t, s, researchGang("g", 3, 2))
	if c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute}); ok {
		t.Fatalf("preempted for a gang that still would not fit: %+v", c)
	}
	// Nor will the state machine take such a decision from a stale leader.
	var vs []command.Victim
	for k := 1; k <= 2; k++ {
		for g := 1; g <= 2; g++ {
			id := fmt.Sprintf("m%d%d", k, g)
			vs = append(vs, command.Victim{TaskID: id + "-a", AttemptID: "att-" + id, WorkerID: fmt.Sprintf("w%d", k)})
		}
	}
	c := command.PreemptTasks{For: "g-a", WorkerID: "w1", Victims: vs, MinRuntime: time.Minute, HoldUntil: at(500), Now: at(400)}
	if res := apply(t, s, c); !errors.Is(res.Err(), ErrConflict) {
		t.Fatalf("a gang preemption that does not make room: %v", res.Err())
	}
}

// Classic case: storm prevention with gangs. A gang preempts nothing
// that has not run its minimum runtime, and a running gang is no victim
// while any of its members is young.
func TestClassicGangStormPrevented(t *testing.T) {
	// m31 started late: w3 cannot be freed before its minimum runtime.
	s := gangFleet(t, 3, 2, "m31")
	mustApply(t, s, researchGang("g", 3, 2))
	opts := preemption.Options{MinRuntime: 5 * time.Minute}
	if c, ok := s.PlanPreemption(at(400), opts); ok {
		t.Fatalf("preempted a young attempt for a gang (or part of what the gang needs): %+v", c)
	}
	c, ok := s.PlanPreemption(at(260+300), opts)
	if !ok || len(c.Victims) != 6 {
		t.Fatalf("once every victim is old enough: %v %+v", ok, c)
	}

	// A running gang with one young member is no victim.
	s = New()
	mustApply(t, s,
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		command.CreateTeam{Name: "research", Settings: teamSettings(100, 200), By: "admin", Now: at(0)},
		register("w1", "w1-G1"), register("w2", "w2-G1"), inTeam(gangJob("v", 2), "ml"))
	assign := placeGang(t, s, "v", 2)
	mustApply(t, s,
		command.StartTask{TaskID: assign.Members[0].TaskID, WorkerID: assign.Members[0].WorkerID, AttemptID: assign.Members[0].AttemptID, Now: at(2)},
		command.StartTask{TaskID: assign.Members[1].TaskID, WorkerID: assign.Members[1].WorkerID, AttemptID: assign.Members[1].AttemptID, Now: at(300)})
	r := inTeam(submit("r", 1, 1), "research")
	r.Now = at(20)
	mustApply(t, s, r)
	if c, ok := s.PlanPreemption(at(400), opts); ok {
		t.Fatalf("a gang with a young member preempted: %+v", c)
	}
}

// A victim named by its own worker and one named the way commands were
// before victims carried theirs apply alike.
func TestPreemptTasksVictimWorkerForms(t *testing.T) {
	for _, named := range []string{"", "w1"} {
		s := preemptStore(t, []running{{"m1", "ml", 0, 2, false}}, inTeam(submit("r", 1, 1), "research"))
		c := command.PreemptTasks{For: "r-a", WorkerID: "w1", Victims: []command.Victim{{TaskID: "m1-a", AttemptID: "att-m1", WorkerID: named}}, MinRuntime: time.Minute, HoldUntil: at(500), Now: at(400)}
		mustApply(t, s, c)
		if got := preempted(s, "w1"); len(got) != 1 {
			t.Fatalf("victim worker %q: told to stop %v", named, got)
		}
	}
	s := preemptStore(t, []running{{"m1", "ml", 0, 2, false}}, inTeam(submit("r", 1, 1), "research"))
	c := command.PreemptTasks{For: "r-a", WorkerID: "w1", Victims: []command.Victim{{TaskID: "m1-a", AttemptID: "att-m1", WorkerID: "w2"}}, MinRuntime: time.Minute, HoldUntil: at(500), Now: at(400)}
	if res := apply(t, s, c); !errors.Is(res.Err(), ErrStaleAttempt) {
		t.Fatalf("a victim named on a worker it is not on: %v", res.Err())
	}
}

// A gang preemption, with victims on several workers and a gang victim
// stopped whole, replays alike: a replica restored from a snapshot taken
// before it, applying the same entries as Raft delivers them, answers
// each alike and ends in the same state.
func TestGangPreemptionReplaysAlike(t *testing.T) {
	s := gangFleet(t, 3, 2, "")
	// ml's two-member gang on w1 and w2 replaces m11 and m21.
	mustApply(t, s, command.FinishTask{TaskID: "m11-a", WorkerID: "w1", AttemptID: "att-m11", Now: at(3)},
		command.FinishTask{TaskID: "m21-a", WorkerID: "w2", AttemptID: "att-m21", Now: at(3)},
		inTeam(gangJob("v", 2), "ml"))
	placeGang(t, s, "v", 4)
	snap := snapshotBytes(t, s)
	var log []command.Command
	var results [][]Result
	step := func(c command.Command) {
		log = append(log, c)
		results = append(results, applyWire(t, s, c))
	}
	step(researchGang("g", 3, 2))
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute})
	if !ok || len(c.Victims) < 6 {
		t.Fatalf("plan %v %+v", ok, c)
	}
	step(c)
	for _, v := range c.Victims {
		step(command.FinishTask{TaskID: v.TaskID, WorkerID: v.On(c.WorkerID), AttemptID: v.AttemptID, ExitCode: 143, Now: at(410)})
	}
	if gp, ok := s.PlanGang("w1", "", 0, "g"); ok {
		step(gangCommand(s, "w1", gp))
	} else {
		t.Fatal("gang g not placed after its preemption")
	}
	r := New()
	if err := r.Restore(strings.NewReader(string(snap))); err != nil {
		t.Fatal(err)
	}
	for i, c := range log {
		if d := resultDiff(applyWire(t, r, c), results[i]); d != "" {
			t.Fatalf("entry %d (%T) answered differently on the restored replica: %s", i, c, d)
		}
	}
	if bad := stateDiffs(s, r, at(500)); len(bad) > 0 {
		t.Fatalf("the replicas disagree:\n  %s", strings.Join(bad, "\n  "))
	}
}

// A large gang is one candidate, not one per member: a gang of 70 that
// cannot fit does not fill the look's 64 candidates and keep a later
// task that can preempt from being looked at.
func TestLargeGangIsOneCandidate(t *testing.T) {
	s := gangFleet(t, 3, 2, "")
	big := researchGang("big", 70, 1)
	ids := make([]string, 70)
	for i := range ids {
		ids[i] = fmt.Sprintf("big-%02d", i)
	}
	big.TaskIDs = ids
	r := inTeam(submit("r", 1, 1), "research")
	r.Now = at(30)
	mustApply(t, s, big, r)
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute})
	if !ok || c.For != "r-a" || len(c.Victims) != 1 {
		t.Fatalf("plan %v %+v, want one victim for r-a", ok, c)
	}
}

// Within a team, a gang of higher priority preempts lower-priority tasks
// of its own team on as many workers as it needs; one of equal priority
// preempts nothing.
func TestGangPreemptsLowerPriorityOfItsTeam(t *testing.T) {
	for _, tc := range []struct {
		priority int
		victims  int
	}{{10, 4}, {0, 0}} {
		s := New()
		mustApply(t, s, command.CreateTeam{Name: "research", Settings: teamSettings(100, 400), By: "admin", Now: at(0)})
		for k := 1; k <= 2; k++ {
			w := fmt.Sprintf("w%d", k)
			mustApply(t, s, register(w, w+"-G1", w+"-G2"))
			for g := 1; g <= 2; g++ {
				id := fmt.Sprintf("l%d%d", k, g)
				mustApply(t, s, inTeam(submit(id, 1, 1), "research"),
					command.AssignTask{TaskID: id + "-a", WorkerID: w, AttemptID: "att-" + id, Devices: []string{fmt.Sprintf("%s-G%d", w, g)}, Now: at(2)},
					command.StartTask{TaskID: id + "-a", WorkerID: w, AttemptID: "att-" + id, Now: at(2)})
			}
		}
		g := researchGang("g", 2, 2)
		g.Spec.Priority = tc.priority
		mustApply(t, s, g)
		c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute})
		if len(c.Victims) != tc.victims || ok != (tc.victims > 0) {
			t.Fatalf("priority %d: plan %v %+v, want %d victims", tc.priority, ok, c, tc.victims)
		}
		if ok {
			if got := victimWorkers(c); got["w1"] != 2 || got["w2"] != 2 {
				t.Fatalf("victims by worker %v", got)
			}
			mustApply(t, s, c)
		}
	}
}
