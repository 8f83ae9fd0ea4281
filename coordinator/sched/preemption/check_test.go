package preemption

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// The apply's re-check of a preemption: the plan the leader made passes;
// each way the state may have moved on since, or a command be forged, is
// refused with the state's sentinel, and the plan's own victims come
// back in the order named.
func TestCheck(t *testing.T) {
	now := t0.Add(time.Hour)
	plan := func() command.PreemptTasks {
		return command.PreemptTasks{For: "r-0", WorkerID: "w1", MinRuntime: time.Minute, Now: now, TeamRoom: true,
			Victims: []command.Victim{{TaskID: "a-0", AttemptID: "att-a-0"}}}
	}
	cases := []struct {
		name  string
		spoil func(q *queued, c *command.PreemptTasks)
		err   error
	}{
		{"the plan as made", func(*queued, *command.PreemptTasks) {}, nil},
		{"a task that is not there", func(_ *queued, c *command.PreemptTasks) { c.For = "gone-0" }, stateerr.ErrNotFound},
		{"a task placed meanwhile", func(q *queued, _ *command.PreemptTasks) { q.tasks["r-0"].State = "assigned" }, stateerr.ErrConflict},
		{"no victim named", func(_ *queued, c *command.PreemptTasks) { c.Victims = nil }, stateerr.ErrInvalid},
		{"a worker that is not there", func(_ *queued, c *command.PreemptTasks) { c.WorkerID = "w9" }, stateerr.ErrNotFound},
		{"a victim's attempt ended meanwhile", func(_ *queued, c *command.PreemptTasks) { c.Victims[0].AttemptID = "att-old" }, stateerr.ErrStaleAttempt},
		{"a victim named twice", func(_ *queued, c *command.PreemptTasks) { c.Victims = append(c.Victims, c.Victims[0]) }, stateerr.ErrInvalid},
		{"a victim on another worker", func(q *queued, c *command.PreemptTasks) {
			q.busy(q.worker("w2", 1), "b", "ml", 0, 0)
			c.Victims = []command.Victim{{TaskID: "b-0", AttemptID: "att-b-0", WorkerID: "w2"}}
		}, stateerr.ErrInvalid},
		{"room freed meanwhile: it fits as things are", func(q *queued, _ *command.PreemptTasks) {
			q.worker("w2", 1)
		}, stateerr.ErrConflict},
		{"a victim too young to stop", func(_ *queued, c *command.PreemptTasks) { c.Now = t0.Add(time.Second) }, ErrTooYoung},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := newQueued()
			w := q.worker("w1", 1)
			q.quota["research"] = 100
			q.busy(w, "a", "ml", 0, 0)
			q.pend("r", "research", 1, 5, 1)
			cmd := plan()
			c.spoil(q, &cmd)
			got, err := Check(q, cmd)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if err == nil && (got.For.ID != "r-0" || got.Worker.ID != "w1" || len(got.Victims) != 1 || got.Victims[0].ID != "a-0") {
				t.Fatalf("checked %+v", got)
			}
		})
	}
}

// A gang victim is taken whole: naming one member of a running gang
// without the others is refused, naming all passes, victims in the
// order named.
func TestCheckTakesAGangWhole(t *testing.T) {
	now := t0.Add(time.Hour)
	q := newQueued()
	w := q.worker("w1", 2)
	q.quota["research"] = 200
	q.job("g", "ml", 1, 0, 2)
	q.run("g-0", w, t0, 0)
	q.run("g-1", w, t0, 1)
	q.pend("r", "research", 2, 5, 1)
	one := command.PreemptTasks{For: "r-0", WorkerID: "w1", MinRuntime: time.Minute, Now: now, TeamRoom: true,
		Victims: []command.Victim{{TaskID: "g-1", AttemptID: "att-g-1"}}}
	if _, err := Check(q, one); !errors.Is(err, ErrGangMember) {
		t.Fatalf("one member named: %v, want ErrGangMember", err)
	}
	both := one
	both.Victims = append([]command.Victim{{TaskID: "g-1", AttemptID: "att-g-1"}}, command.Victim{TaskID: "g-0", AttemptID: "att-g-0"})
	got, err := Check(q, both)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range got.Victims {
		ids = append(ids, v.ID)
	}
	if !slices.Equal(ids, []string{"g-1", "g-0"}) {
		t.Fatalf("victims %v, want g-1 g-0 (the order named)", ids)
	}
}
