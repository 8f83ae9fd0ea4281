package state

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func TestProposeTypesTheOutcome(t *testing.T) {
	errLost := errors.New("leadership lost")
	cases := []struct {
		name   string
		result Result
		err    error
		want   error
	}{
		{"outcome of the asked type", Result{value: Task{ID: "t1"}}, nil, nil},
		{"refusal", Refused(ErrStaleAttempt), nil, ErrStaleAttempt},
		{"proposal failed", Result{}, errLost, errLost},
		{"outcome of another type", Result{value: true}, nil, ErrOutcomeType},
		{"no outcome", Result{}, nil, ErrOutcomeType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := func(context.Context, command.Command) (Result, error) { return c.result, c.err }
			got, err := Propose[Task](t.Context(), p, command.StartTask{})
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if c.want == nil && got.ID != "t1" {
				t.Fatalf("outcome %+v", got)
			}
		})
	}
}

// Every command the codec knows, but Batch, has an apply function, and
// none other has.
func TestEveryCommandTypeHasAHandler(t *testing.T) {
	types := command.Types()
	for _, ty := range types {
		if _, ok := handlers[ty]; !ok && ty != command.TypeBatch {
			t.Errorf("command type %d has no handler", ty)
		}
	}
	for ty := range handlers {
		if !slices.Contains(types, ty) {
			t.Errorf("a handler for type %d, which the codec does not know", ty)
		}
	}
}
