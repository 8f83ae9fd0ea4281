package state

import (
	"context"
	"errors"
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

// Every command the codec knows, but Batch, has an apply function.
func TestEveryCommandTypeHasAHandler(t *testing.T) {
	for ty := range 256 {
		c, err := command.Decode([]byte{byte(ty), '{', '}'})
		if err != nil || c.Type() == command.TypeBatch {
			continue
		}
		if _, ok := handlers[c.Type()]; !ok {
			t.Errorf("command type %d (%T) has no handler", ty, c)
		}
	}
	for ty := range handlers {
		if _, err := command.Decode([]byte{byte(ty), '{', '}'}); err != nil {
			t.Errorf("handler for type %d, which the codec does not know: %v", ty, err)
		}
	}
}
