package httpapi_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/cluster"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/internal/certs"
	"github.com/gpulayer/gpulayer/internal/oidctest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// apiCaller makes raw calls through the validating proxy.
type apiCaller struct {
	t   *testing.T
	url string
}

// call sends body (raw bytes, or a value encoded as JSON; nil: none) and
// answers the status and the body.
func (c apiCaller) call(method, path, token string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	media := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd, media = bytes.NewReader(b), "application/octet-stream"
	default:
		js, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		rd, media = bytes.NewReader(js), "application/json"
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if media != "" {
		req.Header.Set("Content-Type", media)
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode, out
}

// must calls and fails the test unless the answer has status want; it
// decodes a JSON answer into into (when not nil).
func (c apiCaller) must(want int, method, path, token string, body, into any) {
	c.t.Helper()
	st, out := c.call(method, path, token, body)
	if st != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, st, out, want)
	}
	if into != nil {
		if err := json.Unmarshal(out, into); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// TestRealAnswersMatchAPIDescription drives a real coordinator through
// nearly every route, behind a proxy that validates each answer, success
// and error alike, against the coordinator's own GET /v1/openapi.json. It
// fails on any answer that does not validate, and lists the routes it
// could not exercise.
func TestRealAnswersMatchAPIDescription(t *testing.T) {
	idp := oidctest.Start(t, jose.ES256)
	idp.SetGroups("alice", "ml")
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.OIDC = oidc.Config{Issuer: idp.Issuer, Audience: oidctest.ClientID, Mappings: []oidc.Mapping{{Value: "ml", Team: api.DefaultTeam, Roles: []string{"read", "submit"}}}}
	}})
	direct := apiCaller{t, h.URL}
	var doc json.RawMessage
	direct.must(200, "GET", "/v1/openapi.json", "", nil, &doc)
	proxy := newValidatingProxy(t, newAPIValidator(t, doc), h.URL)
	c := apiCaller{t, proxy.srv.URL}
	admin := h.AdminToken

	// Status, the description, metrics and the dashboard: no credential.
	for _, p := range []string{"/v1/status/health", "/v1/status/leader", "/v1/status/peers", "/v1/status/self", "/v1/openapi.json", "/metrics", "/ui", "/ui/app.js"} {
		c.must(200, "GET", p, "", nil, nil)
	}
	c.must(404, "GET", "/ui/no-such-file", "", nil, nil)

	// Tokens.
	var submit, approvalJoin, readTok api.CreateTokenResponse
	c.must(201, "POST", "/v1/tokens", admin, api.CreateTokenRequest{Kind: "client", Name: "oas-submit", Roles: []string{"submit"}}, &submit)
	c.must(201, "POST", "/v1/tokens", admin, api.CreateTokenRequest{Kind: "client", Name: "oas-read", Roles: []string{"read"}}, &readTok)
	c.must(201, "POST", "/v1/tokens", admin, api.CreateTokenRequest{Kind: "join", Name: "oas-approval", RequiresApproval: true, Labels: map[string]string{"rack": "r1"}}, &approvalJoin)
	c.must(200, "GET", "/v1/tokens", admin, nil, nil)
	c.must(200, "GET", "/v1/tokens?kind=join", admin, nil, nil)
	c.must(200, "GET", "/v1/tokens/"+submit.ID, admin, nil, nil)
	var inst api.CreateTokenResponse
	c.must(201, "POST", "/v1/instance-tokens", admin, api.CreateInstanceTokenRequest{InstanceID: "i-oas"}, &inst)
	var instances api.TokenList
	c.must(200, "GET", "/v1/instance-tokens", admin, nil, &instances)
	if len(instances.Tokens) != 1 || instances.Tokens[0].Kind != api.TokenKindInstance {
		t.Fatalf("GET /v1/instance-tokens: %+v", instances)
	}

	// Single sign-on: a provider's ID token becomes a client token; an
	// expired one is 401, an unmapped subject 403.
	var sso api.OIDCExchangeResponse
	c.must(201, "POST", api.PathAuthOIDC, "", api.OIDCExchangeRequest{IDToken: idp.IDToken(t, "alice")}, &sso)
	c.must(200, "GET", "/v1/jobs", sso.Token, nil, nil)
	c.must(200, "GET", api.PathAuthSelf, sso.Token, nil, nil)
	c.must(401, "POST", api.PathAuthOIDC, "", api.OIDCExchangeRequest{IDToken: idp.Forge(t, idp.Claims("alice", oidctest.ClientID, -time.Minute, "ml"))}, nil)
	c.must(403, "POST", api.PathAuthOIDC, "", api.OIDCExchangeRequest{IDToken: idp.IDToken(t, "bob")}, nil)
	c.must(400, "POST", api.PathAuthOIDC, "", api.OIDCExchangeRequest{}, nil)

	// Workers register: a join token, an instance token, one awaiting approval.
	dev := api.Device{Index: 0, UUID: "GPU-oas-0", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy}
	var w1, w2, w3 api.RegisterResponse
	c.must(201, "POST", "/v1/workers/register", h.JoinToken, api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []api.Device{dev}}, &w1)
	c.must(200, "POST", "/v1/workers/register", h.JoinToken, api.RegisterRequest{WorkerID: "w1"}, nil)
	c.must(201, "POST", "/v1/workers/register", inst.Token, api.RegisterRequest{WorkerID: "w2", Origin: api.OriginProvider, InstanceID: "i-oas", Capabilities: []string{"*"}, Executors: []string{"exec"}}, &w2)
	c.must(201, "POST", "/v1/workers/register", approvalJoin.Token, api.RegisterRequest{WorkerID: "w3", Capabilities: []string{"*"}, Executors: []string{"exec"}}, &w3)
	c.must(200, "POST", "/v1/workers/w3/approve", admin, nil, nil)
	c.must(200, "GET", "/v1/workers/self", w1.WorkerToken, nil, nil)
	c.must(200, "POST", "/v1/workers/self/heartbeat", w1.WorkerToken, api.HeartbeatRequest{Devices: []api.Device{dev}, Executors: []string{"exec"}}, nil)
	c.must(200, "POST", "/v1/workers/self/heartbeat", w2.WorkerToken, nil, nil)

	// A job runs to its end: acquire, start, logs, finish; then its logs.
	cfg := json.RawMessage(`{"command":"echo","args":["hi"]}`)
	var job api.JobResponse
	c.must(201, "POST", "/v1/jobs", submit.Token, api.JobSpec{Name: "oas", Executor: "exec", Config: cfg, IdempotencyKey: "oas-1"}, &job)
	c.must(200, "POST", "/v1/jobs", submit.Token, api.JobSpec{Name: "oas", Executor: "exec", Config: cfg, IdempotencyKey: "oas-1"}, nil)
	c.must(200, "GET", "/v1/jobs", readTok.Token, nil, nil)
	c.must(200, "GET", "/v1/jobs?limit=1", readTok.Token, nil, nil)
	c.must(200, "GET", "/v1/jobs/"+job.Job.ID, readTok.Token, nil, nil)
	task := acquireOne(t, c, w1.WorkerToken)
	c.must(200, "POST", "/v1/tasks/"+task.ID+"/start", w1.WorkerToken, api.StartRequest{AttemptID: task.AttemptID}, nil)
	chunk := api.LogsRequest{AttemptID: task.AttemptID, Stream: api.StreamStdout, Seq: 1, Data: "hi\n"}
	c.must(200, "POST", "/v1/tasks/"+task.ID+"/logs", w1.WorkerToken, chunk, nil)
	c.must(200, "POST", "/v1/tasks/"+task.ID+"/logs", w1.WorkerToken, chunk, nil) // a seq seen before: accepted false
	c.must(200, "POST", "/v1/tasks/"+task.ID+"/finish", w1.WorkerToken, api.FinishRequest{AttemptID: task.AttemptID, SubmissionID: "oas-s1", ExitCode: 0, Output: json.RawMessage(`{"ok":true}`)}, nil)
	c.must(409, "POST", "/v1/tasks/"+task.ID+"/start", w1.WorkerToken, api.StartRequest{AttemptID: task.AttemptID}, nil)
	c.must(200, "GET", "/v1/jobs/"+job.Job.ID+"/logs", readTok.Token, nil, nil)
	c.must(200, "GET", "/v1/jobs/"+job.Job.ID+"/logs?follow=1", readTok.Token, nil, nil) // ended: the stream ends at once

	// A task that cannot run, and a job cancelled while pending.
	c.must(201, "POST", "/v1/jobs", submit.Token, api.JobSpec{Executor: "exec", Config: cfg}, nil)
	failing := acquireOne(t, c, w1.WorkerToken)
	c.must(200, "POST", "/v1/tasks/"+failing.ID+"/fail", w1.WorkerToken, api.FailRequest{AttemptID: failing.AttemptID, Reason: "no such command", Permanent: true}, nil)
	var pending api.JobResponse
	c.must(201, "POST", "/v1/jobs", submit.Token, api.JobSpec{Executor: "not-installed", Config: cfg, Resources: &api.Resources{GPUs: 1}}, &pending)
	c.must(200, "GET", "/v1/jobs/"+pending.Job.ID, readTok.Token, nil, nil) // with a pending_reason
	c.must(200, "POST", "/v1/jobs/"+pending.Job.ID+"/cancel", submit.Token, nil, nil)
	c.must(409, "POST", "/v1/jobs/"+pending.Job.ID+"/cancel", submit.Token, nil, nil)

	// A gang of two meets at the rendezvous.
	c.must(201, "POST", "/v1/jobs", submit.Token, api.JobSpec{Executor: "exec", Config: cfg, Count: 2, Gang: true}, nil)
	var gang []api.Assignment
	var gangTokens []string
	for _, tok := range []string{w1.WorkerToken, w2.WorkerToken, w3.WorkerToken} {
		var a api.AcquireResponse
		c.must(200, "POST", "/v1/workers/self/acquire", tok, api.AcquireRequest{MaxTasks: 2}, &a)
		for _, as := range a.Tasks {
			gang, gangTokens = append(gang, as), append(gangTokens, tok)
		}
		if len(a.Tasks) == 0 && a.Task != nil {
			gang, gangTokens = append(gang, *a.Task), append(gangTokens, tok)
		}
	}
	if len(gang) != 2 {
		t.Fatalf("the gang's two tasks went out as %d", len(gang))
	}
	var wg sync.WaitGroup
	for i, as := range gang {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, out := c.call("POST", "/v1/tasks/"+as.ID+"/rendezvous", gangTokens[i], api.RendezvousRequest{AttemptID: as.AttemptID, Address: "127.0.0.1", Port: 29500 * (1 - as.Gang.Rank), WaitSeconds: 10})
			if st != 200 || !bytes.Contains(out, []byte(`"ready":true`)) {
				t.Errorf("rendezvous of rank %d: %d %s", as.Gang.Rank, st, out)
			}
		}()
	}
	wg.Wait()

	// Artifacts.
	blob := []byte("an input file\n")
	sum := sha256.Sum256(blob)
	digest := hex.EncodeToString(sum[:])
	c.must(201, "PUT", "/v1/artifacts/"+digest, submit.Token, blob, nil)
	c.must(200, "PUT", "/v1/artifacts/"+digest, submit.Token, blob, nil)
	c.must(200, "GET", "/v1/artifacts/"+digest, readTok.Token, nil, nil)
	c.must(400, "PUT", "/v1/artifacts/"+strings.Repeat("0", 64), submit.Token, blob, nil)

	// Groups.
	c.must(201, "POST", "/v1/teams", admin, api.CreateTeamRequest{Name: "vision", Quota: api.QuotaGPUs(2)}, nil)
	c.must(200, "GET", "/v1/teams", admin, nil, nil)
	c.must(200, "GET", "/v1/usage?group_by=gpu_model", admin, nil, nil)
	c.must(200, "GET", "/v1/queue?team=vision&limit=10", admin, nil, nil)
	c.must(404, "GET", "/v1/queue?team=nobody", admin, nil, nil)
	c.must(200, "GET", "/v1/teams/vision", admin, nil, nil)
	c.must(200, "PATCH", "/v1/teams/vision", admin, api.UpdateTeamRequest{BorrowLimit: &api.GPUAmount{GPUs: 1.5}}, nil)
	c.must(409, "DELETE", "/v1/teams/default", admin, nil, nil)
	c.must(200, "DELETE", "/v1/teams/vision", admin, nil, nil)
	c.must(201, "POST", "/v1/groups", admin, api.CreateGroupRequest{GroupID: "g1", Members: []api.GroupMember{{Kind: "worker", ID: "w1"}}}, nil)
	c.must(200, "GET", "/v1/groups", admin, nil, nil)
	c.must(200, "GET", "/v1/groups/g1", admin, nil, nil)
	c.must(200, "POST", "/v1/groups/g1/members", admin, api.GroupMember{Kind: "worker", ID: "w2"}, nil)
	c.must(200, "DELETE", "/v1/groups/g1/members/worker/w2", admin, nil, nil)
	c.must(409, "POST", "/v1/groups/g1/members", admin, api.GroupMember{Kind: "group", ID: "g1"}, nil)
	c.must(200, "DELETE", "/v1/groups/g1", admin, nil, nil)

	// Enrollment without a token.
	c.must(201, "POST", "/v1/clusters", admin, api.ClusterRequest{ClusterKey: "oas-c", AllowedSourceCIDRs: []string{"127.0.0.0/8"}}, nil)
	c.must(200, "GET", "/v1/clusters", admin, nil, nil)
	c.must(200, "GET", "/v1/clusters/oas-c", admin, nil, nil)
	c.must(201, "POST", "/v1/enrollments", admin, api.EnrollmentRequest{ClusterKey: "oas-c", ExternalWorkerKey: "oas-e", PublicIP: "127.0.0.1"}, nil)
	c.must(200, "GET", "/v1/enrollments", admin, nil, nil)
	c.must(200, "GET", "/v1/enrollments/oas-e", admin, nil, nil)
	var enrolled api.RegisterResponse
	c.must(201, "POST", "/v1/workers/enroll", "", api.EnrollRequest{ClusterKey: "oas-c", ExternalWorkerKey: "oas-e", WorkerID: "w4", Capabilities: []string{"*"}}, &enrolled)
	c.must(409, "POST", "/v1/workers/enroll", "", api.EnrollRequest{ClusterKey: "oas-c", ExternalWorkerKey: "oas-e"}, nil)

	// A worker drains, resumes and deregisters itself.
	c.must(200, "POST", "/v1/workers/self/drain", enrolled.WorkerToken, api.DrainRequest{}, nil)
	c.must(200, "POST", "/v1/workers/self/resume", enrolled.WorkerToken, nil, nil)
	c.must(200, "POST", "/v1/workers/self/deregister", enrolled.WorkerToken, nil, nil)
	c.must(200, "POST", "/v1/enrollments/oas-e/revoke", admin, nil, nil)

	// Fleet control by an admin.
	c.must(200, "GET", "/v1/workers", admin, nil, nil)
	c.must(200, "GET", "/v1/workers/w1", admin, nil, nil)
	c.must(200, "POST", "/v1/workers/w3/drain", admin, api.DrainRequest{}, nil)
	c.must(200, "POST", "/v1/workers/w3/resume", admin, nil, nil)
	c.must(200, "POST", "/v1/workers/w3/stop", admin, nil, nil)
	c.must(200, "POST", "/v1/workers/w1/gpus/approve", admin, nil, nil)
	c.must(200, "POST", "/v1/workers/w1/devices/GPU-oas-0/cordon", admin, api.CordonRequest{Reason: "fan noise"}, nil)
	c.must(200, "POST", "/v1/workers/w1/devices/GPU-oas-0/uncordon", admin, nil, nil)
	c.must(200, "POST", "/v1/workers/w1/devices/GPU-oas-0/drain", admin, api.CordonRequest{Reason: "reset"}, nil)
	c.must(200, "POST", "/v1/workers/w1/devices/GPU-oas-0/uncordon", admin, nil, nil)
	c.must(200, "PUT", "/v1/workers/w1/devices/GPU-oas-0/mig", admin, api.MIGLayoutRequest{Layout: []string{"3g.40gb", "3g.40gb"}}, nil)
	c.must(200, "DELETE", "/v1/workers/w1/devices/GPU-oas-0/mig", admin, nil, nil)
	faulty := dev
	faulty.Healthy, faulty.Health, faulty.HealthReason = false, api.HealthUnhealthy, "xid 79"
	c.must(200, "POST", "/v1/workers/self/heartbeat", w1.WorkerToken, api.HeartbeatRequest{Devices: []api.Device{faulty}, Executors: []string{"exec"}}, nil)
	c.must(200, "POST", "/v1/workers/w1/gpus/GPU-oas-0/clear", admin, nil, nil)
	var reissued api.ReissueResponse
	c.must(200, "POST", "/v1/workers/w2/reissue", admin, nil, &reissued)
	c.must(401, "GET", "/v1/workers/self", w2.WorkerToken, nil, nil)
	c.must(200, "POST", "/v1/workers/w3/revoke", admin, nil, nil)
	c.must(403, "GET", "/v1/workers/self", w3.WorkerToken, nil, nil)
	c.must(200, "GET", "/v1/gpus", admin, nil, nil)
	c.must(200, "GET", "/v1/gpus?worker=w1", admin, nil, nil)
	c.must(404, "GET", "/v1/gpus?worker=ghost", admin, nil, nil)
	c.must(409, "DELETE", "/v1/workers/w1", admin, nil, nil) // live
	c.must(200, "DELETE", "/v1/workers/w3", admin, nil, nil) // revoked: forgotten
	c.must(404, "DELETE", "/v1/workers/w3", admin, nil, nil)

	// The audit log, and a token revoked.
	c.must(200, "GET", "/v1/audit?limit=50&kind=token", admin, nil, nil)
	c.must(200, "DELETE", "/v1/tokens/"+readTok.ID, admin, nil, nil)
	c.must(401, "GET", "/v1/jobs", readTok.Token, nil, nil)

	// Operator routes.
	c.must(200, "GET", "/v1/operator/local/digest", admin, nil, nil)
	c.must(200, "POST", "/v1/operator/gc", admin, nil, nil)
	c.must(404, "DELETE", "/v1/operator/raft/peers/no-such-node", admin, nil, nil)
	c.must(400, "POST", "/v1/operator/raft/peers", admin, api.RaftPeerRequest{NodeID: "c9", RaftAddr: "not an address"}, nil)
	st, snap := c.call("GET", "/v1/operator/snapshot", admin, nil)
	if st != 200 || len(snap) == 0 {
		t.Fatalf("snapshot: %d, %d bytes", st, len(snap))
	}
	c.must(200, "PUT", "/v1/operator/snapshot", admin, snap, nil)

	// Peer routes refuse a caller without a peer certificate, and answer
	// another coordinator: one holding the cluster key's certificate.
	self := h.Server.Node().ID()
	c.must(401, "PUT", "/v1/operator/nodes/"+self, "", api.NodeAddrRequest{HTTPAddr: "http://127.0.0.1:1"}, nil)
	c.must(401, "GET", "/v1/operator/local/artifacts/"+digest, "", nil, nil)
	c.must(401, "POST", "/v1/operator/local/artifacts/"+digest+"/copy", "", nil, nil)
	c.must(403, "PUT", "/v1/operator/artifacts/"+digest+"/holders/"+self, admin, nil, nil)
	peer := apiCaller{t, proxy.via(t, strings.Replace(h.URL, "http://", "https://", 1), peerTransport(t, h)).URL}
	peer.must(200, "PUT", "/v1/operator/nodes/"+self, "", api.NodeAddrRequest{HTTPAddr: h.Server.Store().NodeHTTPAddr(self)}, nil)
	peer.must(200, "GET", "/v1/operator/local/artifacts/"+digest, "", nil, nil)
	peer.must(201, "POST", "/v1/operator/local/artifacts/"+digest+"/copy", "", map[string]any{"size": len(blob), "sources": []string{}}, nil)
	peer.must(200, "PUT", "/v1/operator/artifacts/"+digest+"/holders/"+self, "", map[string]any{"held": true, "size": len(blob), "reason": "fetched"}, nil)

	// Refusals have the error shape too.
	c.must(404, "GET", "/v1/jobs/jnope", admin, nil, nil)
	c.must(400, "POST", "/v1/jobs", submit.Token, []byte(`{"executor":"exec","bogus":1}`), nil)
	c.must(401, "GET", "/v1/jobs", "glc_0000000000000000_x", nil, nil)
	c.must(403, "GET", "/v1/workers", submit.Token, nil, nil)

	proxy.mu.Lock()
	failures := append([]string(nil), proxy.failures...)
	answers, requests := proxy.answers, proxy.requests
	proxy.mu.Unlock()
	t.Logf("%d answers validated, and the %d requests the coordinator accepted", answers, requests)
	if requests == 0 {
		t.Error("no accepted request was checked against the description")
	}
	for _, f := range failures {
		t.Errorf("answer does not match the API description: %s", f)
	}
	success, errorsOnly := proxy.exercised()
	var never []string
	for _, op := range proxy.v.operations() {
		if !slices.Contains(success, op) && !slices.Contains(errorsOnly, op) {
			never = append(never, op)
		}
	}
	t.Logf("%d operations answered with success, validated: %s", len(success), strings.Join(success, ", "))
	t.Logf("%d operations answered with errors only, validated: %s", len(errorsOnly), strings.Join(errorsOnly, ", "))
	t.Logf("%d operations not exercised: %s", len(never), strings.Join(never, ", "))
	// Today 65 of 67 answer with success (the Raft voter routes need a
	// second node); a new route not yet driven here is listed above and
	// may lower the share, never below four in five.
	if total := len(proxy.v.operations()); len(success) < total*80/100 {
		t.Errorf("only %d of %d operations answered with success", len(success), total)
	}
}

// peerTransport reaches a harness's coordinator as another coordinator
// of its cluster would: TLS with the certificate its cluster key derives.
func peerTransport(t *testing.T, h *coordinatortest.Harness) http.RoundTripper {
	t.Helper()
	key, err := coordinator.ReadClusterKey(filepath.Join(h.DataDir, coordinator.ClusterKeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	cert, pool, err := certs.DerivedPeer(key, "global", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	p := &cluster.PeerTLS{Certificate: cert, Roots: pool, ServerName: certs.ServerName("global")}
	return &http.Transport{TLSClientConfig: p.ClientConfig()}
}

// acquireOne takes one task for the worker holding token.
func acquireOne(t *testing.T, c apiCaller, token string) api.Assignment {
	t.Helper()
	var a api.AcquireResponse
	c.must(200, "POST", "/v1/workers/self/acquire", token, api.AcquireRequest{WaitSeconds: 5}, &a)
	if a.Task == nil {
		t.Fatal("acquire answered no task")
	}
	return *a.Task
}
