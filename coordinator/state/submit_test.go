package state

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A refused submission leaves the state as it was: every check runs
// before any change (a task id listed twice once left its first task
// behind, pending, without a job, and the snapshot after it could not be
// restored).
func TestRefusedSubmissionChangesNothing(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1"), submit("j1", 1, 0))
	withIDs := func(ids ...string) command.SubmitJob {
		c := submit("jx", len(ids), 0)
		c.TaskIDs = ids
		return c
	}
	cases := []struct {
		name string
		cmd  command.SubmitJob
		want error
	}{
		{"task id listed twice", withIDs("x", "x"), ErrInvalid},
		{"task id listed twice, not first", withIDs("x", "y", "y"), ErrInvalid},
		{"empty task id", withIDs("x", ""), ErrInvalid},
		{"task id with a slash", withIDs("x", "a/b"), ErrInvalid},
		{"task of another job", withIDs("x", "j1-a"), ErrConflict},
		{"fewer task ids than the count", func() command.SubmitJob { c := withIDs("x"); c.Spec.Count = 2; return c }(), ErrInvalid},
		{"job that exists", submit("j1", 1, 0), ErrConflict},
	}
	before := encodeWithoutAudit(t, s)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Apply(c.cmd).(Result).Err(); !errors.Is(err, c.want) {
				t.Fatalf("submit: %v, want %v", err, c.want)
			}
			if !bytes.Equal(encodeWithoutAudit(t, s), before) {
				t.Fatal("a refused submission changed the state")
			}
		})
	}
	// The state still restores, and a good submission after them works.
	r, _ := roundTrip(t, s)
	if err := r.Apply(command.SubmitJob{JobID: "jy", TaskIDs: []string{"x"}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: "admin", Now: at(2)}).(Result).Err(); err != nil {
		t.Fatal(err)
	}
}

func encodeWithoutAudit(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Capture().WithoutAudit().Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
