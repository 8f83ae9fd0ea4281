package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/place"
)

// gangJob is a gang job of count tasks of one GPU each.
func gangJob(id string, count int) command.SubmitJob {
	c := submit(id, count, 1)
	c.Spec.Gang = true
	return c
}

// assignGangFrom plans the gang at the head of worker's match and turns
// the plan into the command the scheduler would propose.
func assignGangFrom(t *testing.T, s *Store, worker string) command.AssignGang {
	t.Helper()
	cand, ok, err := s.Match(worker, "", nil)
	if err != nil || !ok || cand.Gang == nil {
		t.Fatalf("match for %s: %+v %v %v, want a gang placement", worker, cand, ok, err)
	}
	return gangCommand(s, worker, cand.Gang)
}

func gangCommand(s *Store, worker string, plan []place.Member) command.AssignGang {
	tk, _ := s.Task(plan[0].TaskID)
	c := command.AssignGang{JobID: tk.JobID, WorkerID: worker, RequestID: "r-" + worker, Now: at(5)}
	for i, m := range plan {
		c.Members = append(c.Members, command.GangMember{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: fmt.Sprintf("%s-%d", m.TaskID, i), Devices: m.Devices})
	}
	return c
}

func states(s *Store, ids ...string) []string {
	var out []string
	for _, id := range ids {
		tk, _ := s.Task(id)
		out = append(out, tk.State)
	}
	return out
}

// A gang that the fleet cannot take whole is not placed at all; once it
// can, one decision assigns every member, the asking worker's first.
func TestGangIsPlacedWholeOrNotAtAll(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3", "GPU-3"), gangJob("g", 4))
	if cand, ok, _ := s.Match("w1", "", nil); ok {
		t.Fatalf("a gang of 4 one-GPU tasks was placed on 3 one-GPU workers: %+v", cand)
	}
	if j, _ := s.Job("g"); !strings.Contains(j.PendingReason, "a gang of 4 placed whole; the live workers can hold at most 3") {
		t.Fatalf("pending reason %q, want the gang's shortfall", j.PendingReason)
	}
	mustApply(t, s, register("w4", "GPU-4"))
	c := assignGangFrom(t, s, "w3")
	workers := []string{}
	for _, m := range c.Members {
		workers = append(workers, m.WorkerID)
	}
	if !slices.Equal(workers, []string{"w3", "w1", "w2", "w4"}) {
		t.Fatalf("placement by rank: %v, want the asking worker first, then the others by id", workers)
	}
	r := apply(t, s, c)
	outs, err := OutcomeOf[[]AssignOutcome](r)
	if err != nil || len(outs) != 1 || outs[0].Task.ID != "g-a" {
		t.Fatalf("the asking worker's answer: %+v %v, want g-a alone", outs, err)
	}
	if got := states(s, "g-a", "g-b", "g-c", "g-d"); !slices.Equal(got, []string{"assigned", "assigned", "assigned", "assigned"}) {
		t.Fatalf("after the placement: %v", got)
	}
	if d := s.GangDeliveries("w1"); len(d) != 1 || d[0].Task.ID != "g-b" {
		t.Fatalf("w1's delivery: %+v, want g-b", d)
	}
	mustApply(t, s, command.StartTask{TaskID: "g-b", WorkerID: "w1", AttemptID: c.Members[1].AttemptID, Now: at(6)})
	if d := s.GangDeliveries("w1"); len(d) != 0 {
		t.Fatalf("a started member is still delivered: %+v", d)
	}
	// The same acquire again (its answer lost) gets the same answer.
	again := apply(t, s, gangCommand(s, "w3", []place.Member{{TaskID: "g-a", WorkerID: "w3"}}))
	if outs, err := OutcomeOf[[]AssignOutcome](again); err != nil || len(outs) != 1 || outs[0].Task.AttemptID != c.Members[0].AttemptID {
		t.Fatalf("replayed acquire: %+v %v", outs, err)
	}
}

// A member is never assigned alone, and a placement that no longer fits
// whole (one GPU taken since it was planned) changes nothing.
func TestGangPlacementIsCheckedWhole(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3", "GPU-3"), gangJob("g", 3), submit("k", 1, 1))
	if r := apply(t, s, command.AssignTask{TaskID: "g-a", WorkerID: "w1", AttemptID: "x", Devices: []string{"GPU-1"}, Now: at(2)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("a member assigned alone: %v, want conflict", r.Err())
	}
	c := assignGangFrom(t, s, "w1")
	mustApply(t, s, command.AssignTask{TaskID: "k-a", WorkerID: "w3", AttemptID: "k1", Devices: []string{"GPU-3"}, Now: at(3)})
	before := snapshotBytes(t, s)
	if r := apply(t, s, c); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("a placement with a GPU taken since: %v, want conflict", r.Err())
	}
	if after := snapshotBytes(t, s); string(after) != string(before) {
		t.Fatal("a refused placement changed the state")
	}
	for name, bad := range map[string]func(*command.AssignGang){
		"a member missing":   func(c *command.AssignGang) { c.Members = c.Members[:2] },
		"a member twice":     func(c *command.AssignGang) { c.Members[2] = c.Members[1] },
		"a foreign task":     func(c *command.AssignGang) { c.Members[2].TaskID = "k-a" },
		"no attempt id":      func(c *command.AssignGang) { c.Members[0].AttemptID = "" },
		"a GPU it lacks":     func(c *command.AssignGang) { c.Members[0].Devices = []string{"GPU-2"} },
		"one GPU for two":    func(c *command.AssignGang) { c.Members[1].WorkerID, c.Members[1].Devices = "w1", []string{"GPU-1"} },
		"an unknown worker":  func(c *command.AssignGang) { c.Members[1].WorkerID = "nobody" },
		"not a gang":         func(c *command.AssignGang) { c.JobID = "k" },
		"no devices at all":  func(c *command.AssignGang) { c.Members[0].Devices = nil },
		"an unknown gang id": func(c *command.AssignGang) { c.JobID = "nope" },
	} {
		c := gangCommand(s, "w1", []place.Member{{TaskID: "g-a", WorkerID: "w1", Devices: []string{"GPU-1"}}, {TaskID: "g-b", WorkerID: "w2", Devices: []string{"GPU-2"}}, {TaskID: "g-c", WorkerID: "w2", Devices: []string{"GPU-2"}}})
		c.RequestID = ""
		bad(&c)
		if r := apply(t, s, c); r.Err() == nil {
			t.Errorf("%s: accepted", name)
		}
		if after := snapshotBytes(t, s); string(after) != string(before) {
			t.Fatalf("%s: a refused placement changed the state", name)
		}
	}
}

// Two gangs that want the same GPUs: both plans fit on their own, the
// first to commit takes them, the second is refused whole and holds
// nothing, so neither waits on the other; it is placed once the first
// is done.
func TestCompetingGangsCannotDeadlock(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3", "GPU-3"), gangJob("a", 2), gangJob("b", 2))
	planA, _ := s.PlanGang("w1", "", 0, "a")
	planB, _ := s.PlanGang("w2", "", 0, "b")
	if planA == nil || planB == nil {
		t.Fatalf("plans: %v %v, want both to fit alone", planA, planB)
	}
	mustApply(t, s, gangCommand(s, "w1", planA))
	if r := apply(t, s, gangCommand(s, "w2", planB)); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("the second gang: %v, want conflict", r.Err())
	}
	if got := states(s, "b-a", "b-b"); !slices.Equal(got, []string{"pending", "pending"}) {
		t.Fatalf("the refused gang: %v, want all pending", got)
	}
	if _, ok, _ := s.Match("w3", "", nil); ok {
		t.Fatal("gang b placed with one free GPU")
	}
	for i, id := range []string{"a-a", "a-b"} {
		tk, _ := s.Task(id)
		mustApply(t, s, command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, ExitCode: 0, Now: at(10 + i)})
	}
	mustApply(t, s, assignGangFrom(t, s, "w3"))
	if got := states(s, "b-a", "b-b"); !slices.Equal(got, []string{"assigned", "assigned"}) {
		t.Fatalf("gang b after a ended: %v", got)
	}
}

// runningGang is a store running gang g of count members on as many
// one-GPU workers, every member started.
func runningGang(t *testing.T, count, maxAttempts int) (*Store, []string) {
	t.Helper()
	s := New()
	var ids []string
	for i := range count {
		mustApply(t, s, register(fmt.Sprintf("w%d", i+1), fmt.Sprintf("GPU-%d", i+1)))
		ids = append(ids, fmt.Sprintf("g-%c", 'a'+i))
	}
	job := gangJob("g", count)
	job.Spec.MaxAttempts = maxAttempts
	mustApply(t, s, job)
	startGang(t, s, ids)
	return s, ids
}

func startGang(t *testing.T, s *Store, ids []string) {
	t.Helper()
	mustApply(t, s, assignGangFrom(t, s, "w1"))
	for _, id := range ids {
		tk, _ := s.Task(id)
		mustApply(t, s, command.StartTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Now: at(6)})
	}
}

func end(t *testing.T, s *Store, id string, how string) {
	t.Helper()
	tk, _ := s.Task(id)
	var c command.Command
	switch how {
	case "exit 1":
		c = command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, ExitCode: 1, Now: at(20)}
	case "exit 0":
		c = command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, ExitCode: 0, Now: at(20)}
	case "fail":
		c = command.FailTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Reason: "executor crashed", Now: at(20)}
	case "lost":
		c = command.LoseAttempt{TaskID: id, AttemptID: tk.AttemptID, Reason: "lease expired", Now: at(20)}
	case "permanent":
		c = command.FailTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Reason: "no such command", Permanent: true, Now: at(20)}
	}
	mustApply(t, s, c)
}

// One member's attempt ending other than in success ends every other
// member's: the gang goes back to the queue whole, the others' attempts
// preempted and not counted, while the failing member has attempts
// left; once it has none, or its failure is permanent, every member
// fails.
func TestOneMemberFailingEndsTheGang(t *testing.T) {
	for _, how := range []string{"exit 1", "fail", "lost"} {
		t.Run(how, func(t *testing.T) {
			s, ids := runningGang(t, 3, 2)
			end(t, s, "g-b", how)
			if got := states(s, ids...); !slices.Equal(got, []string{"pending", "pending", "pending"}) {
				t.Fatalf("after g-b ended (%s): %v, want the gang requeued whole", how, got)
			}
			a := task(t, s, "g-a")
			if a.Attempts[0].State != attemptPreempted || a.AttemptsUsed() != 0 {
				t.Fatalf("g-a's attempt: %s (%d used), want preempted, not counted", a.Attempts[0].State, a.AttemptsUsed())
			}
			if want := "gang member 1 (task g-b) ended"; !strings.Contains(a.Attempts[0].Reason, want) {
				t.Fatalf("g-a's attempt reason %q, want it to say %q", a.Attempts[0].Reason, want)
			}
			if b := task(t, s, "g-b"); b.AttemptsUsed() != 1 {
				t.Fatalf("g-b used %d attempts, want 1", b.AttemptsUsed())
			}
			if n := len(s.ActiveTasks("w1")) + len(s.ActiveTasks("w2")) + len(s.ActiveTasks("w3")); n != 0 {
				t.Fatalf("%d members still held after the gang ended", n)
			}
			startGang(t, s, ids)
			end(t, s, "g-b", how)
			if got := states(s, ids...); !slices.Equal(got, []string{"failed", "failed", "failed"}) {
				t.Fatalf("after g-b's last attempt: %v, want the gang failed", got)
			}
		})
	}
	t.Run("permanent", func(t *testing.T) {
		s, ids := runningGang(t, 3, 5)
		end(t, s, "g-c", "permanent")
		if got := states(s, ids...); !slices.Equal(got, []string{"failed", "failed", "failed"}) {
			t.Fatalf("after a permanent failure: %v, want the gang failed", got)
		}
	})
}

// Once a member has succeeded the gang cannot be run again whole: a
// peer that fails afterwards fails, and takes the rest with it.
func TestAGangWithASucceededMemberIsNotRetried(t *testing.T) {
	s, ids := runningGang(t, 3, 3)
	end(t, s, "g-a", "exit 0")
	end(t, s, "g-b", "exit 1")
	if got := states(s, ids...); !slices.Equal(got, []string{"succeeded", "failed", "failed"}) {
		t.Fatalf("states: %v", got)
	}
	if got := s.queue.Len(); got != 0 {
		t.Fatalf("%d tasks left in the queue", got)
	}
}

// Rendezvous is ready once every member's current attempt has joined,
// lists members by rank, asks rank 0 for a port, and refuses an attempt
// that is not current.
func TestRendezvous(t *testing.T) {
	s, ids := runningGang(t, 3, 3)
	join := func(id, addr string, port int) Result {
		tk, _ := s.Task(id)
		return apply(t, s, command.JoinRendezvous{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Address: addr, Port: port, Now: at(7)})
	}
	if r := join("g-a", "10.0.0.1", 0); !errors.Is(r.Err(), ErrInvalid) {
		t.Fatalf("rank 0 without a port: %v, want invalid", r.Err())
	}
	for _, j := range []struct {
		id, addr string
		port     int
	}{{"g-c", "10.0.0.3", 0}, {"g-a", "10.0.0.1", 29500}} {
		if r := join(j.id, j.addr, j.port); r.Err() != nil {
			t.Fatal(r.Err())
		}
	}
	c := task(t, s, "g-c")
	if _, ready, err := s.Rendezvous("g-c", c.WorkerID, c.AttemptID); ready || err != nil {
		t.Fatalf("ready with a member missing: %v %v", ready, err)
	}
	if r := join("g-b", "node-b.example", 0); r.Err() != nil {
		t.Fatal(r.Err())
	}
	peers, ready, err := s.Rendezvous("g-c", c.WorkerID, c.AttemptID)
	if !ready || err != nil || len(peers) != 3 {
		t.Fatalf("after all joined: %v %v %v", peers, ready, err)
	}
	for i, p := range peers {
		if p.Rank != i || p.TaskID != ids[i] {
			t.Fatalf("peer %d: %+v", i, p)
		}
	}
	if peers[0].Endpoint != (Endpoint{Address: "10.0.0.1", Port: 29500}) || peers[1].Endpoint.Address != "node-b.example" {
		t.Fatalf("endpoints: %+v", peers)
	}
	if _, _, err := s.Rendezvous("g-c", c.WorkerID, "not-mine"); !errors.Is(err, ErrStaleAttempt) {
		t.Fatalf("a wrong attempt: %v, want stale_attempt", err)
	}
	if _, _, err := s.Rendezvous("g-c", "w1", c.AttemptID); err == nil {
		t.Fatal("another worker read the gang")
	}
	// The gang restarts: the new attempts have not joined yet.
	end(t, s, "g-b", "lost")
	startGang(t, s, ids)
	c = task(t, s, "g-c")
	if _, ready, err := s.Rendezvous("g-c", c.WorkerID, c.AttemptID); ready || err != nil {
		t.Fatalf("the restarted gang is ready before it met: %v %v", ready, err)
	}
	// A plain task cannot join.
	mustApply(t, s, submit("k", 1, 0), command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "k1", Now: at(30)})
	if r := apply(t, s, command.JoinRendezvous{TaskID: "k-a", WorkerID: "w1", AttemptID: "k1", Address: "10.0.0.1", Port: 1, Now: at(31)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("a plain task joined: %v", r.Err())
	}
}

// The asking worker takes no more members than it has slots for, and a
// worker whose agent said how many tasks it runs gets no more than it
// has free; one that never said gets one.
func TestGangPlacementKeepsWithinSlots(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), register("w2"), register("w3"))
	job := submit("g", 5, 0)
	job.Spec.Gang = true
	mustApply(t, s, job, command.UpdateWorker{WorkerID: "w2", Executors: []string{"exec"}, MaxTasks: 3, Now: at(2)})
	plan, ok := s.PlanGang("w1", "", 1, "g")
	if !ok {
		t.Fatal("not placed")
	}
	per := map[string]int{}
	for _, m := range plan {
		per[m.WorkerID]++
	}
	if per["w1"] != 1 || per["w2"] != 3 || per["w3"] != 1 {
		t.Fatalf("members per worker: %v, want w1 1 (its slots), w2 3 (its max_tasks), w3 1 (unsaid)", per)
	}
	if _, ok := s.PlanGang("w1", "", 1, "nope"); ok {
		t.Fatal("an unknown job was placed")
	}
}

// labeled registers a worker of one GPU with topology labels.
func labeled(id, rack, sw string) command.RegisterWorker {
	c := register(id, "GPU-"+id)
	c.Labels = map[string]string{labelRack: rack, labelSwitch: sw}
	return c
}

// A gang fills the asking worker's switch, then its rack, then the other
// switches with most room first: it spans as few switches and racks as
// the free GPUs allow, where id order would have crossed them.
func TestGangPlacementFollowsTopology(t *testing.T) {
	for _, tc := range []struct {
		name    string
		workers []command.RegisterWorker
		count   int
		from    string
		want    []string
	}{
		{"its own switch first", []command.RegisterWorker{
			labeled("a1", "r1", "s1"), labeled("a2", "r1", "s2"), labeled("b1", "r1", "s1"), labeled("b2", "r1", "s2"),
		}, 2, "b2", []string{"b2", "a2"}},
		{"its rack before another", []command.RegisterWorker{
			labeled("a1", "r2", "s3"), labeled("a2", "r2", "s3"), labeled("c1", "r1", "s1"), labeled("c2", "r1", "s2"),
		}, 2, "c1", []string{"c1", "c2"}},
		{"the roomiest switch elsewhere", []command.RegisterWorker{
			labeled("x0", "r0", "s0"), labeled("a1", "r1", "s1"), labeled("b1", "r2", "s2"), labeled("b2", "r2", "s2"), labeled("b3", "r2", "s2"),
		}, 4, "x0", []string{"x0", "b1", "b2", "b3"}},
		{"no labels: id order", []command.RegisterWorker{
			register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3", "GPU-3"),
		}, 3, "w2", []string{"w2", "w1", "w3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New()
			for _, w := range tc.workers {
				mustApply(t, s, w)
			}
			mustApply(t, s, gangJob("g", tc.count))
			// A store restored from a snapshot reads the labels again
			// (gangtopology_index.go) and places the gang the same.
			r := New()
			if err := r.Restore(bytes.NewReader(snapshotBytes(t, s))); err != nil {
				t.Fatal(err)
			}
			for name, st := range map[string]*Store{"live": s, "restored": r} {
				var got []string
				for _, m := range assignGangFrom(t, st, tc.from).Members {
					got = append(got, m.WorkerID)
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("%s: placement %v, want %v", name, got, tc.want)
				}
			}
		})
	}
}
