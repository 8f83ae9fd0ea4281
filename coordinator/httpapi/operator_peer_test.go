package httpapi

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// recordingOperator records the peers it is asked to add.
type recordingOperator struct{ added []string }

func (o *recordingOperator) AddVoter(_ context.Context, id, addr string) error {
	o.added = append(o.added, id+"@"+addr)
	return nil
}
func (*recordingOperator) RemoveServer(context.Context, string) error      { return nil }
func (*recordingOperator) Restore(context.Context, io.Reader, int64) error { return nil }
func (*recordingOperator) Barrier(context.Context) error                   { return nil }

// POST /v1/operator/raft/peers refuses an address Raft cannot dial, and
// an id out of form, with invalid_argument, before the configuration is
// touched: "not an addr" used to be added, and the cluster lost its
// quorum (finding 3 of the third review).
func TestAddPeerRefusesBadAddresses(t *testing.T) {
	cases := []struct{ name, body string }{
		{"not an address", `{"node_id":"c4","raft_addr":"not an addr"}`},
		{"no port", `{"node_id":"c4","raft_addr":"10.0.0.4"}`},
		{"port zero", `{"node_id":"c4","raft_addr":"10.0.0.4:0"}`},
		{"port too high", `{"node_id":"c4","raft_addr":"10.0.0.4:70000"}`},
		{"a scheme", `{"node_id":"c4","raft_addr":"tcp://10.0.0.4:7000"}`},
		{"unspecified host", `{"node_id":"c4","raft_addr":"0.0.0.0:7000"}`},
		{"id with a space", `{"node_id":"c 4","raft_addr":"10.0.0.4:7000"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := &recordingOperator{}
			s := &Server{operator: op}
			req := httptest.NewRequest("POST", "/v1/operator/raft/peers", strings.NewReader(c.body))
			err := s.addPeer(httptest.NewRecorder(), req, auth.Principal{})
			var ae *apiError
			if !errors.As(err, &ae) || ae.code != api.CodeInvalidArgument {
				t.Fatalf("add peer: %v, want invalid_argument", err)
			}
			if len(op.added) != 0 {
				t.Fatalf("the configuration was changed: %v", op.added)
			}
		})
	}
}
