package state

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// preemptStore is a store where team ml (a quota for its
// non-preemptible tasks alone) runs on every GPU of
// w1 (GPU-1..GPU-n) and team research (quota: one GPU) has just asked
// for one. ml's jobs are named by the running list, each one task on
// one GPU, with its priority, started at the second given.
type running struct {
	job      string
	team     string
	priority int
	started  int
	notPre   bool
}

func preemptStore(t *testing.T, rs []running, waiting command.SubmitJob) *Store {
	t.Helper()
	s := New()
	devs := make([]string, len(rs))
	for i := range rs {
		devs[i] = "GPU-" + string(rune('1'+i))
	}
	// A job that may not be preempted runs only within its team's quota:
	// ml's quota covers its non-preemptible tasks, and no more.
	var mlQuota int64
	for _, r := range rs {
		if r.team == "ml" && r.notPre {
			mlQuota += 100
		}
	}
	mustApply(t, s, register("w1", devs...),
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, mlQuota), By: "admin", Now: at(0)},
		command.CreateTeam{Name: "research", Settings: teamSettings(100, 100), By: "admin", Now: at(0)})
	// The non-preemptible tasks are placed first, while ml's use is
	// within its quota; then the others, borrowing.
	order := make([]int, 0, len(rs))
	for pass := range 2 {
		for i, r := range rs {
			if r.notPre == (pass == 0) {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		r := rs[i]
		c := inTeam(submit(r.job, 1, 1), r.team)
		c.Spec.Priority = r.priority
		if r.notPre {
			no := false
			c.Spec.Preemptible = &no
		}
		mustApply(t, s, c,
			command.AssignTask{TaskID: r.job + "-a", WorkerID: "w1", AttemptID: "att-" + r.job, Devices: []string{devs[i]}, Now: at(r.started)},
			command.StartTask{TaskID: r.job + "-a", WorkerID: "w1", AttemptID: "att-" + r.job, Now: at(r.started)})
	}
	waiting.Now = at(20)
	mustApply(t, s, waiting)
	return s
}

func victimIDs(c command.PreemptTasks) string {
	var ids []string
	for _, v := range c.Victims {
		ids = append(ids, v.TaskID)
	}
	return strings.Join(ids, ",")
}

func prioritised(c command.SubmitJob, p int) command.SubmitJob {
	c.Spec.Priority = p
	return c
}

// The leader's decision: which task it preempts, for whom, or none.
func TestPlanPreemptionChoosesVictims(t *testing.T) {
	opts := preemption.Options{MinRuntime: 5 * time.Minute}
	later := 20 + 600
	cases := []struct {
		name    string
		rs      []running
		waiting command.SubmitJob
		now     int
		victims string // "" when no preemption is due
	}{
		{"borrowed, lowest priority first", []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", -5, 3, false}, {"m3", "ml", 0, 4, false}},
			inTeam(submit("r", 1, 1), "research"), later, "m2-a"},
		{"borrowed, youngest among equals", []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", 0, 4, false}, {"m3", "ml", 0, 3, false}},
			inTeam(submit("r", 1, 1), "research"), later, "m2-a"},
		{"enough victims for a two-GPU task", []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", 0, 4, false}, {"m3", "ml", 0, 3, false}},
			inTeam(submit("r", 1, 2), "research"), later, "m2-a,m3-a"},
		{"never a job that is not preemptible", []running{{"m1", "ml", 0, 2, true}, {"m2", "ml", 0, 4, true}, {"m3", "ml", 5, 3, false}},
			inTeam(submit("r", 1, 1), "research"), later, "m3-a"},
		{"none when only non-preemptible ones would free room", []running{{"m1", "ml", 0, 2, true}, {"m2", "ml", 0, 4, false}},
			inTeam(submit("r", 1, 2), "research"), later, ""},
		{"storm guard: no victim before its minimum runtime", []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", 0, 250, false}},
			inTeam(submit("r", 1, 1), "research"), 400, "m1-a"},
		{"storm guard: none when all are young", []running{{"m1", "ml", 0, 200, false}},
			inTeam(submit("r", 1, 1), "research"), 300, ""},
		{"none for a team at its quota", []running{{"m1", "ml", 0, 2, false}, {"r0", "research", 0, 3, false}},
			inTeam(submit("r", 1, 1), "research"), later, ""},
		{"none from a team within its quota", []running{{"m1", "research", 0, 2, false}},
			inTeam(submit("r", 1, 1), "ml"), later, ""},
		{"within a team, higher priority preempts lower", []running{{"m1", "ml", 3, 2, false}, {"m2", "ml", 1, 3, false}},
			prioritised(inTeam(submit("r", 1, 1), "ml"), 2), later, "m2-a"},
		{"within a team, not an equal priority", []running{{"m1", "ml", 2, 2, false}},
			prioritised(inTeam(submit("r", 1, 1), "ml"), 2), later, ""},
		{"none when it would not fit even so", []running{{"m1", "ml", 0, 2, false}},
			inTeam(submit("r", 1, 2), "research"), later, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := preemptStore(t, tc.rs, tc.waiting)
			c, ok := s.PlanPreemption(at(tc.now), opts)
			if tc.victims == "" {
				if ok {
					t.Fatalf("a preemption was planned: %+v", c)
				}
				return
			}
			if !ok || c.For != "r-a" || c.WorkerID != "w1" || victimIDs(c) != tc.victims {
				t.Fatalf("planned %v %+v, want victims %s for r-a on w1", ok, c, tc.victims)
			}
			mustApply(t, s, c) // the state machine agrees
		})
	}
}

// Within a team at its ceiling, a task of higher priority preempts one of
// lower priority although GPUs are free elsewhere in the fleet: the free
// GPUs are no room for it, since its team may hold no more (PROTOCOL.md,
// Queueing: within a team, a higher priority may preempt a lower one).
// Without the team room in placeableNow it waited for the other task to
// end on its own.
func TestPlanPreemptionWithinATeamAtItsCeiling(t *testing.T) {
	s := New()
	zero := int64(0)
	ceiling := teamSettings(100, 100)
	ceiling.BorrowLimitCenti = &zero
	mustApply(t, s, register("w1", "GPU-1", "GPU-2", "GPU-3"),
		command.CreateTeam{Name: "ord", Settings: ceiling, By: "admin", Now: at(0)},
		inTeam(submit("low", 1, 1), "ord"),
		command.AssignTask{TaskID: "low-a", WorkerID: "w1", AttemptID: "att-low", Devices: []string{"GPU-1"}, Now: at(1)},
		command.StartTask{TaskID: "low-a", WorkerID: "w1", AttemptID: "att-low", Now: at(1)})
	high := prioritised(inTeam(submit("r", 1, 1), "ord"), 1000)
	high.Now = at(20)
	mustApply(t, s, high)
	if c, ok := s.PlanPreemption(at(20), preemption.Options{MinRuntime: 5 * time.Minute}); ok {
		t.Fatalf("preempted before the minimum runtime: %+v", c)
	}
	c, ok := s.PlanPreemption(at(1000), preemption.Options{MinRuntime: 5 * time.Minute})
	if !ok || c.For != "r-a" || victimIDs(c) != "low-a" || !c.TeamRoom {
		t.Fatalf("planned %v %+v, want low-a preempted for r-a", ok, c)
	}
	// The same decision as an entry written before the planner counted
	// the team's room (TeamRoom unset) is applied as it was then: refused,
	// since the task fits on the free GPUs; a log replays as it applied.
	old := c
	old.TeamRoom = false
	if r := s.Apply(old); r.(Result).Err() == nil {
		t.Fatal("an entry of the earlier rule preempted for a task that fits on free GPUs")
	}
	mustApply(t, s, c) // the state machine agrees

	// An equal priority takes nothing, and neither does another team's
	// task (ord holds no GPU it borrowed).
	s2 := New()
	mustApply(t, s2, register("w1", "GPU-1", "GPU-2"),
		command.CreateTeam{Name: "ord", Settings: ceiling, By: "admin", Now: at(0)},
		inTeam(submit("low", 1, 1), "ord"),
		command.AssignTask{TaskID: "low-a", WorkerID: "w1", AttemptID: "att-low", Devices: []string{"GPU-1"}, Now: at(1)},
		command.StartTask{TaskID: "low-a", WorkerID: "w1", AttemptID: "att-low", Now: at(1)},
		func() command.SubmitJob { c := inTeam(submit("same", 1, 1), "ord"); c.Now = at(20); return c }())
	if c, ok := s2.PlanPreemption(at(1000), preemption.Options{MinRuntime: 5 * time.Minute}); ok {
		t.Fatalf("an equal priority preempted: %+v", c)
	}
}

// A task its team's room holds back takes its own team's victim first:
// another team's borrowed task, though lower in priority, would free a
// GPU but no room, and is left running when the own team's victim does
// both.
func TestTeamRoomPlansTakeOwnVictimsFirst(t *testing.T) {
	s := New()
	four, zero := teamSettings(100, 400), int64(0)
	four.BorrowLimitCenti = &zero
	run := func(job, team string, prio int, worker, dev string) []command.Command {
		c := inTeam(submit(job, 1, 1), team)
		c.Spec.Priority = prio
		return []command.Command{c,
			command.AssignTask{TaskID: job + "-a", WorkerID: worker, AttemptID: "att-" + job, Devices: []string{dev}, Now: at(1)},
			command.StartTask{TaskID: job + "-a", WorkerID: worker, AttemptID: "att-" + job, Now: at(1)}}
	}
	cmds := []command.Command{register("w1", "GPU-1", "GPU-2", "GPU-3"), register("w2", "GPU-4", "GPU-5"),
		command.CreateTeam{Name: "a", Settings: four, By: "admin", Now: at(0)},
		command.CreateTeam{Name: "b", Settings: teamSettings(100, 0), By: "admin", Now: at(0)}}
	cmds = append(cmds, run("ax", "a", 5, "w2", "GPU-4")...)
	cmds = append(cmds, run("ay", "a", 5, "w2", "GPU-5")...)
	cmds = append(cmds, run("alow", "a", -5, "w1", "GPU-2")...)
	cmds = append(cmds, run("bb", "b", -10, "w1", "GPU-1")...)
	p := inTeam(submit("r", 1, 2), "a")
	p.Now = at(20)
	cmds = append(cmds, p)
	mustApply(t, s, cmds...)
	c, ok := s.PlanPreemption(at(1000), preemption.Options{MinRuntime: 5 * time.Minute})
	if !ok || victimIDs(c) != "alow-a" || !c.TeamRoom {
		t.Fatalf("planned %v %+v, want alow-a alone, counting the team's room", ok, c)
	}
	mustApply(t, s, c)
}

// A task that fits as things are preempts nothing.
func TestPlanPreemptionLeavesAPlaceableTask(t *testing.T) {
	s := preemptStore(t, []running{{"m1", "ml", 0, 2, false}}, inTeam(submit("r", 1, 1), "research"))
	mustApply(t, s, register("w2", "GPU-9"))
	if c, ok := s.PlanPreemption(at(1000), preemption.Options{}); ok {
		t.Fatalf("preempted for a task a free GPU takes: %+v", c)
	}
}

// Applying a preemption: the victim is told to stop with a reason naming
// the preempting job and team, its end is preempted and uses no
// attempt, the freed GPU goes to the preemptor only, and the audit log
// says who preempted whom.
func TestPreemptTasksApplies(t *testing.T) {
	s := preemptStore(t, []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", 0, 3, false}}, inTeam(submit("r", 1, 1), "research"))
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute, HoldSlack: time.Minute})
	if !ok || victimIDs(c) != "m2-a" {
		t.Fatalf("plan %v %+v", ok, c)
	}
	mustApply(t, s, c)
	if got := preempted(s, "w1"); len(got) != 1 || got[0] != "m2-a" {
		t.Fatalf("told to stop: %v", got)
	}
	if again, ok := s.PlanPreemption(at(401), preemption.Options{}); ok {
		t.Fatalf("a second preemption while the first one's victim stops: %+v", again)
	}
	mustApply(t, s, command.FinishTask{TaskID: "m2-a", WorkerID: "w1", AttemptID: "att-m2", ExitCode: 143, Now: at(410)})
	v := task(t, s, "m2-a")
	a := v.Attempts[0]
	if v.State != taskPending || a.State != api.AttemptPreempted || v.AttemptsUsed() != 0 ||
		!strings.Contains(a.Reason, "preempted by job r (team research)") {
		t.Fatalf("victim after its end: %s, attempt %+v", v.State, a)
	}
	// m2-a is older in the queue than r-a, yet GPU-2 is held for r-a.
	m, ok, err := s.MatchAt(at(411), "w1", "", 0, nil)
	if err != nil || !ok || m.TaskID != "r-a" {
		t.Fatalf("match on w1: %+v %v %v", m, ok, err)
	}
	if r := apply(t, s, command.AssignTask{TaskID: "m2-a", WorkerID: "w1", AttemptID: "x", Devices: []string{"GPU-2"}, Now: at(411)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("the held GPU given to another task: %v", r.Err())
	}
	mustApply(t, s, command.AssignTask{TaskID: "r-a", WorkerID: "w1", AttemptID: "att-r", Devices: []string{"GPU-2"}, Now: at(412)})
	if w := s.workers["w1"]; len(w.Holds) != 0 {
		t.Fatalf("holds left after the preemptor was placed: %+v", w.Holds)
	}
	found := false
	for _, ev := range s.Audit(audit.Filter{}) {
		if ev.Kind == "task.preempted" && ev.Subject == "m2-a" && ev.Team == "ml" && strings.Contains(ev.Detail, "job r (team research)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no audit event says who preempted whom: %+v", s.Audit(audit.Filter{}))
	}
}

// A hold lapses at its bound: the GPU is anyone's again.
func TestPreemptionHoldExpires(t *testing.T) {
	s := preemptStore(t, []running{{"m1", "ml", 0, 2, false}}, inTeam(submit("r", 1, 1), "research"))
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute, HoldSlack: time.Minute})
	if !ok {
		t.Fatal("no preemption planned")
	}
	mustApply(t, s, c, command.FinishTask{TaskID: "m1-a", WorkerID: "w1", AttemptID: "att-m1", ExitCode: 143, Now: at(401)})
	if r := apply(t, s, command.AssignTask{TaskID: "m1-a", WorkerID: "w1", AttemptID: "x", Devices: []string{"GPU-1"}, Now: at(402)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("held GPU taken before the bound: %v", r.Err())
	}
	past := c.HoldUntil.Add(time.Second)
	sweep, ok := s.PlanPreemption(past, preemption.Options{MinRuntime: time.Hour})
	if !ok || sweep.For != "" {
		t.Fatalf("no sweep of the expired hold: %v %+v", ok, sweep)
	}
	mustApply(t, s, sweep, command.AssignTask{TaskID: "m1-a", WorkerID: "w1", AttemptID: "x", Devices: []string{"GPU-1"}, Now: past})
}

// A decision gone stale, or one the policy forbids, is refused whole
// and changes nothing.
func TestPreemptTasksRefusesStaleOrForbidden(t *testing.T) {
	base := []running{{"m1", "ml", 0, 2, false}, {"m2", "ml", 0, 3, true}}
	good := command.PreemptTasks{For: "r-a", WorkerID: "w1", Victims: []command.Victim{{TaskID: "m1-a", AttemptID: "att-m1"}}, MinRuntime: time.Minute, HoldUntil: at(500), Now: at(400)}
	edit := func(f func(*command.PreemptTasks)) command.PreemptTasks {
		c := good
		c.Victims = append([]command.Victim(nil), good.Victims...)
		f(&c)
		return c
	}
	cases := []struct {
		name string
		c    command.PreemptTasks
		want error
	}{
		{"stale attempt", edit(func(c *command.PreemptTasks) { c.Victims[0].AttemptID = "old" }), ErrStaleAttempt},
		{"not preemptible", edit(func(c *command.PreemptTasks) { c.Victims[0] = command.Victim{TaskID: "m2-a", AttemptID: "att-m2"} }), preemption.ErrNotPreemptible},
		{"too young", edit(func(c *command.PreemptTasks) { c.MinRuntime = time.Hour }), preemption.ErrTooYoung},
		{"named twice", edit(func(c *command.PreemptTasks) { c.Victims = append(c.Victims, c.Victims[0]) }), ErrInvalid},
		{"no victims", edit(func(c *command.PreemptTasks) { c.Victims = nil }), ErrInvalid},
		{"victims with no task", edit(func(c *command.PreemptTasks) { c.For = "" }), ErrInvalid},
		{"preemptor unknown", edit(func(c *command.PreemptTasks) { c.For = "nope" }), ErrNotFound},
		{"preemptor running", edit(func(c *command.PreemptTasks) { c.For = "m2-a" }), ErrConflict},
		{"worker unknown", edit(func(c *command.PreemptTasks) { c.WorkerID = "w9" }), ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := preemptStore(t, base, inTeam(submit("r", 1, 1), "research"))
			before := snapshotBytes(t, s)
			if r := apply(t, s, tc.c); !errors.Is(r.Err(), tc.want) {
				t.Fatalf("got %v, want %v", r.Err(), tc.want)
			}
			if after := snapshotBytes(t, s); string(after) != string(before) {
				t.Fatal("a refused preemption changed the state")
			}
		})
	}
	s := preemptStore(t, base, inTeam(submit("r", 1, 1), "research"))
	mustApply(t, s, good)
}

// A preemption's hold outranks the backfill hold: the victim, an
// eight-GPU task requeued at the head of the order (its team ml sorts
// before research at equal shares), holds the GPUs it needs as they free
// up, which are the very GPUs held for research's task; the preemptor
// still gets them, or neither could run.
func TestPreemptorIsNotHeldBackByTheHead(t *testing.T) {
	s := New()
	devs := []string{"GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7", "GPU-8"}
	mustApply(t, s, register("w1", devs...),
		command.CreateTeam{Name: "ml", Settings: teamSettings(100, 0), By: "admin", Now: at(0)},
		command.CreateTeam{Name: "research", Settings: teamSettings(100, 100), By: "admin", Now: at(0)},
		inTeam(submit("m", 1, 8), "ml"),
		command.AssignTask{TaskID: "m-a", WorkerID: "w1", AttemptID: "att-m", Devices: devs, Now: at(1)},
		command.StartTask{TaskID: "m-a", WorkerID: "w1", AttemptID: "att-m", Now: at(1)})
	r := inTeam(submit("r", 1, 1), "research")
	r.Now = at(20)
	mustApply(t, s, r)
	c, ok := s.PlanPreemption(at(400), preemption.Options{MinRuntime: time.Minute, HoldSlack: time.Minute})
	if !ok || victimIDs(c) != "m-a" {
		t.Fatalf("plan %v %+v", ok, c)
	}
	mustApply(t, s, c, command.FinishTask{TaskID: "m-a", WorkerID: "w1", AttemptID: "att-m", ExitCode: 143, Now: at(410)})
	if h := s.planView().Hold(at(411)); h == nil || h.JobID != "m" {
		t.Fatalf("the requeued eight-GPU task holds nothing: %+v", h)
	}
	m, ok, err := s.MatchAt(at(411), "w1", "", 0, nil)
	if err != nil || !ok || m.TaskID != "r-a" {
		t.Fatalf("match on w1: %+v %v %v; want research's task on the GPU freed for it", m, ok, err)
	}
}
