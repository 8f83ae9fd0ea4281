package coordinator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// securityScenario drives every credential operation over HTTP: tokens of
// each kind created, redeemed, misused, reissued, rotated and revoked,
// allowlist enrollment accepted and refused, approvals, group changes, a
// cancel and an upload. urls are coordinators to spread raw calls over
// (followers forward); dataDirs get the rotated init file. It returns every
// token minted during the run.
type securityScenario struct {
	t        *testing.T
	admin    *client.Client
	urls     []string
	dataDirs []string
	tokens   []string
	n        int
}

func (s *securityScenario) url() string {
	s.n++
	return s.urls[s.n%len(s.urls)]
}

func (s *securityScenario) keep(tok string) string {
	s.tokens = append(s.tokens, tok)
	return tok
}

func (s *securityScenario) run(adminToken, joinToken string) {
	t := s.t
	ctx := t.Context()
	s.keep(adminToken)
	s.keep(joinToken)
	admin := s.admin
	newToken := func(req api.CreateTokenRequest) api.CreateTokenResponse {
		out, err := admin.CreateToken(ctx, req)
		if err != nil {
			t.Fatalf("create %s token: %v", req.Kind, err)
		}
		s.keep(out.Token)
		return out
	}
	submit := newToken(api.CreateTokenRequest{Kind: "client", Name: "scenario-submit", Roles: []string{"submit"}})
	read := newToken(api.CreateTokenRequest{Kind: "client", Name: "scenario-read", Roles: []string{"read"}})
	if _, err := admin.CreateGroup(ctx, api.CreateGroupRequest{GroupID: "scenario-pool"}); err != nil {
		t.Fatal(err)
	}
	code := newToken(api.CreateTokenRequest{Kind: "join", Name: "scenario-code", MaxUses: 1, RequiresApproval: true, Groups: []string{"scenario-pool"}})
	inst, err := admin.CreateInstanceToken(ctx, api.CreateInstanceTokenRequest{InstanceID: "i-scenario"})
	if err != nil {
		t.Fatal(err)
	}
	s.keep(inst.Token)

	var gated, provider, enrolled api.RegisterResponse
	decodeOK(t, call(t, s.url(), "POST", "/v1/workers/register", code.Token, []byte(`{"worker_id":"gated","capabilities":["*"],"executors":["exec"]}`), nil), 201, &gated)
	s.keep(gated.WorkerToken)
	wantCode(t, "one-time code again", call(t, s.url(), "POST", "/v1/workers/register", code.Token, []byte(`{"worker_id":"gated-2"}`), nil), 401, api.CodeUnauthenticated)
	wantCode(t, "pending heartbeat", call(t, s.url(), "POST", "/v1/workers/self/heartbeat", gated.WorkerToken, []byte(`{}`), nil), 403, api.CodeWorkerPending)
	if _, err := admin.ApproveWorker(ctx, "gated"); err != nil {
		t.Fatal(err)
	}
	decodeOK(t, call(t, s.url(), "POST", "/v1/workers/self/heartbeat", gated.WorkerToken, []byte(`{}`), nil), 200, nil)
	wantCode(t, "instance mismatch", call(t, s.url(), "POST", "/v1/workers/register", inst.Token, []byte(`{"worker_id":"prov","origin":"provider","instance_id":"i-other"}`), nil), 403, api.CodeForbidden)
	decodeOK(t, call(t, s.url(), "POST", "/v1/workers/register", inst.Token, []byte(`{"worker_id":"prov","origin":"provider","instance_id":"i-scenario"}`), nil), 201, &provider)
	s.keep(provider.WorkerToken)

	if _, err := admin.PutCluster(ctx, api.ClusterRequest{ClusterKey: "scenario-dc", AllowedSourceCIDRs: []string{"203.0.113.0/24"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateEnrollment(ctx, api.EnrollmentRequest{ClusterKey: "scenario-dc", ExternalWorkerKey: "scenario-vm", PublicIP: "203.0.113.50"}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "enroll from elsewhere", call(t, s.url(), "POST", "/v1/workers/enroll", "", enrollBody(t, "scenario-dc", "scenario-vm", "vm"), from("198.51.100.50")), 403, api.CodeEnrollmentRefused)
	decodeOK(t, call(t, s.url(), "POST", "/v1/workers/enroll", "", enrollBody(t, "scenario-dc", "scenario-vm", "vm"), from("203.0.113.50")), 201, &enrolled)
	s.keep(enrolled.WorkerToken)

	subClient, _ := client.New(client.Config{Addrs: s.urls, Token: submit.Token})
	job, err := subClient.SubmitJob(ctx, execJob())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := subClient.CancelJob(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.AddGroupMember(ctx, "scenario-pool", workerRef("prov")); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RemoveGroupMember(ctx, "scenario-pool", workerRef("prov")); err != nil {
		t.Fatal(err)
	}
	if _, err := subClient.PutArtifact(ctx, digest([]byte("scenario")), []byte("scenario")); err != nil {
		t.Fatal(err)
	}
	re, err := admin.ReissueWorker(ctx, "prov")
	if err != nil {
		t.Fatal(err)
	}
	s.keep(re.WorkerToken)

	// Misuse, with every real token somewhere it does not belong: on the
	// wrong route, in a body, in a query string, with a wrong secret.
	for _, tok := range s.tokens {
		call(t, s.url(), "POST", "/v1/groups", tok, []byte(`{"group_id":"`+tok+`"}`), nil)
		call(t, s.url(), "GET", "/v1/jobs?token="+tok, tok, nil, nil)
		call(t, s.url(), "POST", "/v1/jobs", tok, []byte(`{"executor":"`+tok+`"}`), nil)
		call(t, s.url(), "GET", "/v1/tokens", tok[:len(tok)-1]+"x", nil, nil)
		call(t, s.url(), "GET", "/v1/audit", "Bearer "+tok, nil, map[string]string{"X-Extra": tok})
	}
	wantCode(t, "read role cancels", call(t, s.url(), "POST", "/v1/jobs/"+job.ID+"/cancel", read.Token, nil, nil), 403, api.CodeForbidden)

	if _, err := admin.RevokeToken(ctx, read.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeWorker(ctx, "gated"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RevokeEnrollment(ctx, "scenario-vm"); err != nil {
		t.Fatal(err)
	}

	// Rotation: init --rotate, copied to every coordinator.
	var rot coordinator.InitTokens
	for i, dir := range s.dataDirs {
		if i == 0 {
			if rot, err = coordinator.Init(dir, true, time.Now()); err != nil {
				t.Fatal(err)
			}
			s.keep(rot.AdminToken)
			s.keep(rot.JoinToken)
			continue
		}
		copyBootstrap(t, s.dataDirs[0], dir)
	}
	coordinatortest.WaitFor(t, 15*time.Second, "the rotation", func() bool {
		return call(t, s.urls[0], "GET", "/v1/jobs", adminToken, nil, nil).status == 401
	})
	s.admin.SetToken(rot.AdminToken)
	if _, err := s.admin.Jobs(ctx, 1); err != nil {
		t.Fatalf("rotated admin token: %v", err)
	}
	decodeOK(t, call(t, s.url(), "POST", "/v1/workers/self/heartbeat", re.WorkerToken, []byte(`{}`), nil), 200, nil)
}

// copyBootstrap copies init's credential file from one data dir to
// another, as an operator copies it to every coordinator.
func copyBootstrap(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from, coordinator.BootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(to, coordinator.BootstrapFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(to, coordinator.BootstrapFile)); err != nil {
		t.Fatal(err)
	}
}

// secretsIn lists, of toks, those whose bearer string or secret part
// appears in b.
func secretsIn(b []byte, toks []string) []string {
	var found []string
	s := string(b)
	for _, tok := range toks {
		if tok == "" {
			continue
		}
		secret := tok[strings.LastIndex(tok, "_")+1:]
		if strings.Contains(s, tok) || strings.Contains(s, secret) {
			found = append(found, tok[:strings.LastIndex(tok, "_")]+"_…")
		}
	}
	return found
}
