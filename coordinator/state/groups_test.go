package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func wm(id string) command.GroupMember { return command.GroupMember{Kind: api.MemberWorker, ID: id} }
func gm(id string) command.GroupMember { return command.GroupMember{Kind: api.MemberGroup, ID: id} }

func mkGroup(id string, members ...command.GroupMember) command.CreateGroup {
	return command.CreateGroup{GroupID: id, Members: members, By: "admin", Now: at(1)}
}

func addM(g string, m command.GroupMember) command.AddGroupMember {
	return command.AddGroupMember{GroupID: g, Member: m, By: "admin", Now: at(2)}
}

func rmM(g string, m command.GroupMember) command.RemoveGroupMember {
	return command.RemoveGroupMember{GroupID: g, Member: m, By: "admin", Now: at(3)}
}

func targeted(id string, count int, target *command.Target, capability string) command.SubmitJob {
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", id, i)
	}
	spec := command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: count, MaxAttempts: 2, Target: target, Capability: capability}
	return command.SubmitJob{JobID: id, TaskIDs: ids, Spec: spec, CreatedBy: "admin", Now: at(1)}
}

func apply(t *testing.T, s *Store, c command.Command) Result {
	t.Helper()
	r, ok := s.Apply(c).(Result)
	if !ok {
		t.Fatalf("%T: not a single result", c)
	}
	return r
}

func mustApply(t *testing.T, s *Store, cs ...command.Command) {
	t.Helper()
	for _, c := range cs {
		if r := apply(t, s, c); r.Err() != nil {
			t.Fatalf("%T %+v: %v", c, c, r.Err())
		}
	}
}

// Seed 002 §6.1: direct and indirect cycles are refused (and change
// nothing), diamonds are not cycles.
func TestGroupCycleDetection(t *testing.T) {
	cases := []struct {
		name  string
		setup []command.Command
		write command.Command
		want  error
	}{
		{"self on create", nil, mkGroup("a", gm("a")), ErrCycleDetected},
		{"self on add", []command.Command{mkGroup("a")}, addM("a", gm("a")), ErrCycleDetected},
		{"direct", []command.Command{mkGroup("b"), mkGroup("a", gm("b"))}, addM("b", gm("a")), ErrCycleDetected},
		{"indirect", []command.Command{mkGroup("c"), mkGroup("b", gm("c")), mkGroup("a", gm("b"))}, addM("c", gm("a")), ErrCycleDetected},
		{"indirect through a diamond", []command.Command{mkGroup("d"), mkGroup("b", gm("d")), mkGroup("c", gm("d")), mkGroup("a", gm("b"), gm("c"))}, addM("d", gm("a")), ErrCycleDetected},
		{"diamond of groups", []command.Command{mkGroup("d"), mkGroup("b", gm("d")), mkGroup("c", gm("d")), mkGroup("a", gm("b"))}, addM("a", gm("c")), nil},
		{"worker in two groups", []command.Command{register("x"), mkGroup("a", wm("x"))}, mkGroup("b", wm("x")), nil},
		{"sibling is not a cycle", []command.Command{mkGroup("b"), mkGroup("a", gm("b")), mkGroup("c")}, addM("c", gm("b")), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New()
			mustApply(t, s, c.setup...)
			before := snapshotBytes(t, s)
			r := apply(t, s, c.write)
			if c.want == nil {
				if r.Err() != nil {
					t.Fatalf("refused: %v", r.Err())
				}
				return
			}
			if !errors.Is(r.Err(), c.want) {
				t.Fatalf("got %v, want %v", r.Err(), c.want)
			}
			if !bytes.Equal(before, snapshotBytes(t, s)) {
				t.Fatal("a refused group write changed the state")
			}
		})
	}
}

func TestGroupMembershipIsTransitive(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), register("w2"), register("w3"),
		mkGroup("leaf", wm("w1")),
		mkGroup("left", gm("leaf")),
		mkGroup("right", gm("leaf"), wm("w2")),
		mkGroup("top", gm("left"), gm("right")),
	)
	g, err := s.Group("top")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Workers, []string{"w1", "w2"}) {
		t.Fatalf("top's workers %v", g.Workers)
	}
	for _, c := range []struct {
		w, g string
		in   bool
	}{{"w1", "top", true}, {"w1", "left", true}, {"w2", "top", true}, {"w2", "left", false}, {"w3", "top", false}} {
		if got := s.InGroup(c.w, c.g); got != c.in {
			t.Errorf("InGroup(%s, %s) = %v, want %v", c.w, c.g, got, c.in)
		}
	}
	w1, _ := s.Worker("w1")
	if !slices.Equal(w1.Groups, []string{"leaf", "left", "right", "top"}) {
		t.Errorf("w1's groups %v", w1.Groups)
	}
	mustApply(t, s, rmM("leaf", wm("w1")))
	if s.InGroup("w1", "top") {
		t.Error("w1 still in top after leaving leaf")
	}
}

func TestGroupWritesAreIdempotentAndChecked(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), mkGroup("g", wm("w1"), wm("w1")))
	g, _ := s.Group("g")
	if len(g.Group.Members) != 1 {
		t.Fatalf("duplicate member on create listed %d times", len(g.Group.Members))
	}
	before := snapshotBytes(t, s)
	if g, err := OutcomeOf[groups.Record](apply(t, s, addM("g", wm("w1")))); err != nil || len(g.Group.Members) != 1 {
		t.Fatalf("adding a present member: %+v %v", g, err)
	}
	if r := apply(t, s, rmM("g", wm("nobody"))); r.Err() != nil {
		t.Fatalf("removing an absent member: %v", r.Err())
	}
	if !bytes.Equal(before, snapshotBytes(t, s)) {
		t.Fatal("idempotent writes changed the state")
	}
	for name, c := range map[string]command.Command{
		"unknown worker member": addM("g", wm("ghost")),
		"unknown group member":  addM("g", gm("ghost")),
		"unknown group":         addM("ghost", wm("w1")),
		"create with unknown":   mkGroup("h", gm("ghost")),
		"remove from unknown":   rmM("ghost", wm("w1")),
		"delete unknown":        command.DeleteGroup{GroupID: "ghost"},
		"target unknown group":  targeted("j", 1, &command.Target{Kind: api.TargetGroup, ID: "ghost"}, ""),
		"target unknown worker": targeted("j", 1, &command.Target{Kind: api.TargetWorker, ID: "ghost"}, ""),
	} {
		if r := apply(t, s, c); !errors.Is(r.Err(), ErrNotFound) {
			t.Errorf("%s: %v, want not found", name, r.Err())
		}
	}
	if r := apply(t, s, mkGroup("g")); !errors.Is(r.Err(), ErrConflict) {
		t.Errorf("duplicate group id: %v, want conflict", r.Err())
	}
	if !bytes.Equal(before, snapshotBytes(t, s)) {
		t.Fatal("refused writes changed the state")
	}
}

// Deleting a group is refused while another group contains it or an
// unfinished task targets it.
func TestDeleteGroupRules(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), mkGroup("inner", wm("w1")), mkGroup("outer", gm("inner")))
	del := func(id string) Result { return apply(t, s, command.DeleteGroup{GroupID: id, By: "admin", Now: at(9)}) }
	if r := del("inner"); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("deleting a contained group: %v, want conflict", r.Err())
	}
	group := &command.Target{Kind: api.TargetGroup, ID: "outer"}
	mustApply(t, s, targeted("j", 1, group, ""))
	if r := del("outer"); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("deleting a group a pending task targets: %v, want conflict", r.Err())
	}
	mustApply(t, s, command.AssignTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", Now: at(10)})
	if r := del("outer"); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("deleting a group a running task targets: %v, want conflict", r.Err())
	}
	mustApply(t, s, command.FinishTask{TaskID: "j-0", WorkerID: "w1", AttemptID: "a1", Now: at(11)})
	if g, err := OutcomeOf[groups.Record](del("outer")); err != nil || g.Group.ID != "outer" {
		t.Fatalf("deleting an unused group: %+v %v", g, err)
	}
	if s.InGroup("w1", "outer") {
		t.Fatal("membership index still names a deleted group")
	}
	if r := del("inner"); r.Err() != nil {
		t.Fatalf("deleting inner once outer is gone: %v", r.Err())
	}
	if w, _ := s.Worker("w1"); len(w.Groups) != 0 {
		t.Fatalf("w1 still lists groups %v", w.Groups)
	}
}

// identityScenario touches every identity command, including refusals.
func identityScenario() []command.Command {
	return []command.Command{
		register("w1", "GPU-1"), register("w2", "GPU-2"), register("w3"),
		mkGroup("sub", wm("w2")),
		mkGroup("pool", wm("w1"), gm("sub")),
		addM("sub", gm("pool")), // refused: cycle
		addM("sub", wm("w3")),
		addM("pool", wm("w1")), // idempotent
		targeted("jg", 2, &command.Target{Kind: api.TargetGroup, ID: "pool"}, ""),
		targeted("jw", 1, &command.Target{Kind: api.TargetWorker, ID: "w3"}, "infer"),
		command.AssignTask{TaskID: "jg-0", WorkerID: "w2", AttemptID: "a1", Now: at(5)},
		command.AssignTask{TaskID: "jg-1", WorkerID: "w3", AttemptID: "a2", Now: at(5)},
		command.ReissueWorker{WorkerID: "w2", Credential: command.CredentialRecord{ID: "cred-w2-b", Kind: "worker", Hash: "h2b"}, By: "admin", Now: at(6)},
		command.StartTask{TaskID: "jg-0", WorkerID: "w2", AttemptID: "a1", Now: at(7)},
		command.RevokeWorker{WorkerID: "w3", By: "admin", Now: at(8)},
		command.ReissueWorker{WorkerID: "w3", Credential: command.CredentialRecord{ID: "cred-w3-b", Kind: "worker", Hash: "h3b"}, Now: at(9)}, // refused: revoked
		rmM("pool", gm("sub")),
		command.DeleteGroup{GroupID: "sub", By: "admin", Now: at(10)},
		command.DeleteGroup{GroupID: "pool", By: "admin", Now: at(10)}, // refused: jg-1 waits for it
		mkGroup("spare"),
	}
}

func TestIdentityReplayIsDeterministic(t *testing.T) {
	assertDeterministicReplay(t, identityScenario())
}

func TestGroupsSurviveSnapshotRestore(t *testing.T) {
	s := New()
	for _, c := range identityScenario() {
		s.Apply(c)
	}
	r, before := roundTrip(t, s)
	if len(decodeSnapshot(t, before).Groups) != 2 {
		t.Fatalf("snapshot holds no groups:\n%q", before)
	}
	if got, want := r.Groups(), s.Groups(); !reflect.DeepEqual(got, want) || len(got) != 2 {
		t.Fatalf("groups after restore: %+v, want %+v", got, want)
	}
	// The membership index is rebuilt: w1 is in pool, and takes jg-1 (its
	// attempt on w3 was lost when w3 was revoked).
	if !r.InGroup("w1", "pool") || r.InGroup("w2", "pool") {
		t.Fatalf("membership after restore: w1 %v w2 %v", r.InGroup("w1", "pool"), r.InGroup("w2", "pool"))
	}
	c, ok, err := r.Match("w1", "", nil)
	if err != nil || !ok || c.TaskID != "jg-1" {
		t.Fatalf("match after restore: %+v %v %v", c, ok, err)
	}
	if r := apply(t, r, command.DeleteGroup{GroupID: "pool"}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("delete a targeted group after restore: %v", r.Err())
	}
}

func TestMatchHonoursTargetsAndCapabilities(t *testing.T) {
	s := New()
	trainer := register("trainer")
	trainer.Capabilities = []string{"train"}
	nothing := register("nothing")
	nothing.Capabilities = []string{}
	mustApply(t, s, register("any"), trainer, nothing, register("other"),
		mkGroup("inner", wm("trainer")), mkGroup("outer", gm("inner")))
	mustApply(t, s,
		targeted("to-other", 1, &command.Target{Kind: api.TargetWorker, ID: "other"}, ""),
		targeted("to-outer", 1, &command.Target{Kind: api.TargetGroup, ID: "outer"}, "train"),
		targeted("infer", 1, nil, "infer"),
		targeted("plain", 1, nil, ""),
	)
	cases := []struct {
		worker, narrow string
		skip           []string
		want           string
	}{
		{"trainer", "", nil, "to-outer-0"},
		{"trainer", "", []string{"to-outer-0"}, "plain-0"},
		{"trainer", "train", nil, "to-outer-0"},
		{"trainer", "train", []string{"to-outer-0"}, ""},
		{"trainer", "infer", nil, ""},
		{"any", "", nil, "infer-0"},
		{"any", "", []string{"infer-0"}, "plain-0"},
		{"any", "infer", []string{"infer-0"}, ""},
		{"other", "", nil, "to-other-0"},
		{"nothing", "", nil, ""},
	}
	for _, c := range cases {
		skip := map[string]bool{}
		for _, id := range c.skip {
			skip[id] = true
		}
		got, ok, err := s.Match(c.worker, c.narrow, skip)
		if err != nil || (c.want == "") == ok || got.TaskID != c.want {
			t.Errorf("%s narrow %q skip %v: %+v %v %v, want %q", c.worker, c.narrow, c.skip, got, ok, err, c.want)
		}
	}
	// The state machine re-checks the target when it assigns.
	if r := apply(t, s, command.AssignTask{TaskID: "to-outer-0", WorkerID: "any", AttemptID: "x", Now: at(4)}); !errors.Is(r.Err(), ErrConflict) {
		t.Fatalf("assigning a group task to a non-member: %v, want conflict", r.Err())
	}
}
