package agent

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A register answer says the id is taken when the coordinator answers 409
// conflict, or, before this version, 200 with no credential; a new
// worker's credential or any other refusal is not that.
func TestIDTaken(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  api.RegisterResponse
		err  error
		want bool
	}{
		{"409 conflict", api.RegisterResponse{}, fmt.Errorf("wrapped: %w", &api.Error{Code: api.CodeConflict, Message: "worker id w1 is registered already"}), true},
		{"200 without a credential (older coordinator)", api.RegisterResponse{WorkerID: "w1"}, nil, true},
		{"201 with a credential", api.RegisterResponse{WorkerID: "w1", WorkerToken: "glw_x"}, nil, false},
		{"refused token", api.RegisterResponse{}, &api.Error{Code: api.CodeUnauthenticated}, false},
		{"transport error", api.RegisterResponse{}, errors.New("connection refused"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := idTaken(tc.reg, tc.err); got != tc.want {
				t.Errorf("idTaken = %v, want %v", got, tc.want)
			}
		})
	}
}
