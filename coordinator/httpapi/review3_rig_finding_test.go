package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// findingRig is the third review's test server: one in-process leader
// whose proposals are applied straight to its store and recorded, with an
// admin token, a join token, and worker w1 holding the running task j1-0
// under attempt a1.
type findingRig struct {
	t      *testing.T
	store  *state.Store
	srv    *Server
	admin  string
	join   string
	joinID string
	worker string

	mu        sync.Mutex
	proposals []command.Command
}

func newFindingRig(t *testing.T) *findingRig {
	t.Helper()
	mint := func(prefix string) auth.Minted {
		m, err := auth.Mint(prefix)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	admin, join, worker := mint(api.PrefixClient), mint(api.PrefixJoin), mint(api.PrefixWorker)
	now := time.Now().UTC()
	st := state.New()
	rig := &findingRig{t: t, store: st, admin: admin.Token.String(), join: join.Token.String(), joinID: join.Token.ID, worker: worker.Token.String()}
	rig.apply(command.ImportBootstrap{Generation: 1, Now: now, Credentials: []command.CredentialRecord{
		{ID: admin.Token.ID, Kind: string(auth.KindClient), Name: "admin", Roles: []string{auth.RoleAdmin}, Hash: admin.Hash, CreatedAt: now},
		{ID: join.Token.ID, Kind: string(auth.KindJoin), Name: "join", Hash: join.Hash, CreatedAt: now, MaxUses: 5},
	}})
	rig.apply(command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: worker.Token.ID, Kind: string(auth.KindWorker), Name: "w1", Hash: worker.Hash, CreatedAt: now},
		Labels: map[string]string{"secret-label": "rack-7"}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: now})
	rig.apply(command.SubmitJob{JobID: "j1", TaskIDs: []string{"j1-0"}, Spec: command.JobSpec{Executor: "exec"}, CreatedBy: "admin", Now: now})
	rig.apply(command.AssignTask{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", LeaseSeconds: 30, Now: now})
	rig.apply(command.StartTask{TaskID: "j1-0", WorkerID: "w1", AttemptID: "a1", Now: now})
	propose := func(_ context.Context, c command.Command) (state.Result, error) {
		rig.mu.Lock()
		rig.proposals = append(rig.proposals, c)
		rig.mu.Unlock()
		return st.Apply(c).(state.Result), nil
	}
	rig.srv = New(Config{Store: st, Cluster: oneNode{}, Propose: propose, AuditFlush: time.Hour})
	return rig
}

func (rig *findingRig) apply(c command.Command) {
	rig.t.Helper()
	if res := rig.store.Apply(c).(state.Result); res.Err() != nil {
		rig.t.Fatalf("%T: %v", c, res.Err())
	}
}

// proposed lists the proposals of type T made so far.
func proposed[T command.Command](rig *findingRig) []T {
	rig.mu.Lock()
	defer rig.mu.Unlock()
	var out []T
	for _, c := range rig.proposals {
		if x, ok := c.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// findingCall is one request to the rig.
type findingCall struct {
	method, path, token, body string
	header                    http.Header // replaces the default headers it names
}

func (rig *findingRig) do(c findingCall) *httptest.ResponseRecorder {
	rig.t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req := httptest.NewRequest(c.method, c.path, body)
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	rec := httptest.NewRecorder()
	rig.srv.ServeHTTP(rec, req)
	return rec
}

// errorCode reads the protocol code of an error answer ("" if none).
func errorCode(rec *httptest.ResponseRecorder) api.Code {
	var b api.ErrorBody
	if json.Unmarshal(rec.Body.Bytes(), &b) != nil || b.Error == nil {
		return ""
	}
	return b.Error.Code
}
