package coordinator_test

// Join tokens with limits, client roles, instance tokens and approval,
// over the real HTTP server (seed 000's known gaps: a static shared join
// token, no approval step, tokens without expiry or rotation, one client
// role).

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func TestTokenLifecycleOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)

	created, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "ci-bot", Roles: []string{"submit", "read", "submit"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.Token, "glc_"+created.ID+"_") || created.Name != "ci-bot" || strings.Join(created.Roles, ",") != "read,submit" || created.CreatedBy != "admin" {
		t.Fatalf("created %+v", created)
	}
	bot := h.Client(t, created.Token)
	job, err := bot.SubmitJob(ctx, execJob())
	if err != nil || job.CreatedBy != "ci-bot" {
		t.Fatalf("submit with the new token: %+v %v", job, err)
	}

	// The listing shows metadata, never a secret or a hash.
	r := call(t, h.URL, "GET", "/v1/tokens", h.AdminToken, nil, nil)
	var list api.TokenList
	decodeOK(t, r, 200, &list)
	secret := created.Token[len(created.Token)-64:]
	if bytes.Contains(r.raw, []byte(secret)) || bytes.Contains(r.raw, []byte(`"hash"`)) || bytes.Contains(r.raw, []byte("glc_")) {
		t.Fatalf("token listing shows a secret or a hash: %s", r.raw)
	}
	kinds := map[string]int{}
	for _, tk := range list.Tokens {
		kinds[tk.Kind]++
	}
	if kinds["client"] != 2 || kinds["join"] != 1 || kinds["worker"] != 0 {
		t.Fatalf("listing by kind %v", kinds)
	}

	// A second live token may not take the name; revoking frees it.
	if _, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "ci-bot"}); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("duplicate live name: %v, want conflict", err)
	}
	if _, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "Admin"}); !client.IsCode(err, api.CodeReservedIdentifier) {
		t.Fatalf("reserved name: %v", err)
	}
	revoked, err := admin.RevokeToken(ctx, created.ID)
	if err != nil || !revoked.Revoked || revoked.RevokedBy != "admin" {
		t.Fatalf("revoke: %+v %v", revoked, err)
	}
	if _, err := admin.RevokeToken(ctx, created.ID); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	if _, err := bot.Jobs(ctx, 1); !client.IsCode(err, api.CodeUnauthenticated) {
		t.Fatalf("revoked token: %v, want unauthenticated", err)
	}
	again := mintClient(t, h, "ci-bot", "read")
	if _, err := h.Client(t, again).Jobs(ctx, 1); err != nil {
		t.Fatalf("a new token under the freed name: %v", err)
	}

	// Expiry: refused once its time has passed.
	short, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: "short", ExpiresInSeconds: 1})
	if err != nil || short.ExpiresAt == "" {
		t.Fatalf("create expiring: %+v %v", short, err)
	}
	if _, err := h.Client(t, short.Token).Jobs(ctx, 1); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	coordinatortest.WaitFor(t, 5*time.Second, "the token to expire", func() bool {
		r := call(t, h.URL, "GET", "/v1/jobs", short.Token, nil, nil)
		return r.status == 401 && strings.Contains(r.body.Error.Message, "expired")
	})
	joinShort := mintJoin(t, admin, api.CreateTokenRequest{Name: "short-join", ExpiresInSeconds: 1})
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/register", joinShort.Token, []byte(`{"worker_id":"early"}`), nil), 201, nil)
	coordinatortest.WaitFor(t, 5*time.Second, "the join token to expire", func() bool {
		// Registering an existing id changes nothing, so polling is safe.
		return call(t, h.URL, "POST", "/v1/workers/register", joinShort.Token, []byte(`{"worker_id":"early"}`), nil).status == 401
	})
	wantCode(t, "expired join token", call(t, h.URL, "POST", "/v1/workers/register", joinShort.Token, []byte(`{"worker_id":"late"}`), nil), 401, api.CodeUnauthenticated)
	if _, err := h.Server.Store().Worker("late"); err == nil {
		t.Fatal("an expired join token registered a worker")
	}

	// Worker credentials are revoked with their worker, not here.
	wtok, _ := enroll(t, h, "w1")
	if _, err := admin.RevokeToken(ctx, strings.Split(wtok, "_")[1]); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("revoking a worker credential as a token: %v", err)
	}
	if _, err := admin.RevokeToken(ctx, "0123456789abcdef"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
}

// A one-time join code redeemed twice at once, through two coordinators
// of a three-node cluster: redemption is decided inside the replicated
// state machine, so exactly one registration wins.
func TestOneTimeJoinCodeRedeemedOnceAcrossTwoCoordinators(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	leader := c.WaitLeader(10 * time.Second)
	var two []*coordinatortest.Node
	for _, n := range c.Nodes {
		if n != leader {
			two = append(two, n)
		}
	}
	two = append(two[:1], leader) // a follower and the leader
	for round := range 5 {
		code, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindJoin, Name: "one-time", MaxUses: 1})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]rawResp, 2)
		start := make(chan struct{})
		for i, n := range []*coordinatortest.Node{two[round%2], two[(round+1)%2]} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				body := jsonBody(t, api.RegisterRequest{WorkerID: "racer-" + string(rune('a'+round)) + string(rune('0'+i)), Capabilities: []string{"*"}})
				results[i] = call(t, n.URL, "POST", "/v1/workers/register", code.Token, body, nil)
			}()
		}
		close(start)
		wg.Wait()
		won, lost := 0, 0
		for _, r := range results {
			switch {
			case r.status == http.StatusCreated:
				won++
			case r.status == http.StatusUnauthorized && r.body.Error.Code == api.CodeUnauthenticated:
				lost++
			default:
				t.Fatalf("round %d: unexpected answer %d %s", round, r.status, r.raw)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("round %d: %d registrations won and %d lost, want exactly one of each", round, won, lost)
		}
		infos, err := admin.Tokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range infos {
			if tk.ID == code.ID && (tk.Uses != 1 || tk.MaxUses != 1) {
				t.Fatalf("round %d: token uses %d of %d", round, tk.Uses, tk.MaxUses)
			}
		}
	}
	ws, err := admin.Workers(ctx)
	if err != nil || len(ws) != 5 {
		t.Fatalf("%d workers after 5 races, want 5: %v", len(ws), err)
	}
	c.Converged(10 * time.Second)
}

// A join token that requires approval registers pending workers: every
// worker route answers worker_pending and no task is handed out until an
// admin approves. Its groups and labels are given to the worker.
func TestApprovalFlow(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	mustGroup(t, admin, "gpu-pool")
	tok := mintJoin(t, admin, api.CreateTokenRequest{Name: "gated", RequiresApproval: true, Groups: []string{"gpu-pool"}, Labels: map[string]string{"zone": "eu-1"}})

	reg, err := h.Client(t, tok.Token).Register(ctx, api.RegisterRequest{WorkerID: "gated-1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Labels: map[string]string{"zone": "spoofed", "rack": "r7"}})
	if err != nil || reg.Status != api.WorkerPending || reg.WorkerToken == "" {
		t.Fatalf("register: %+v %v", reg, err)
	}
	if reg.Worker.Labels["zone"] != "eu-1" || reg.Worker.Labels["rack"] != "r7" || len(reg.Worker.Groups) != 1 || reg.Worker.Groups[0] != "gpu-pool" || reg.Worker.TokenID != tok.ID {
		t.Fatalf("worker record %+v: the token's labels and groups must apply", reg.Worker)
	}
	spec := execJob()
	spec.Target = &api.Target{Kind: api.TargetGroup, ID: "gpu-pool"}
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/workers/self", ""},
		{"POST", "/v1/workers/self/heartbeat", "{}"},
		{"POST", "/v1/workers/self/acquire", "{}"},
		{"POST", "/v1/tasks/" + job.Tasks[0].ID + "/start", `{"attempt_id":"x"}`},
	} {
		wantCode(t, c.method+" "+c.path+" while pending", call(t, h.URL, c.method, c.path, reg.WorkerToken, []byte(c.body), nil), 403, api.CodeWorkerPending)
	}
	if _, _, err := h.Server.Store().Match("gated-1", "", nil); err == nil {
		t.Fatal("the matcher would hand a pending worker a task")
	}

	w, err := admin.ApproveWorker(ctx, "gated-1")
	if err != nil || w.Status != api.WorkerReady || w.ApprovedBy != "admin" {
		t.Fatalf("approve: %+v %v", w, err)
	}
	if w, err := admin.ApproveWorker(ctx, "gated-1"); err != nil || w.Status != api.WorkerReady {
		t.Fatalf("approving again: %+v %v", w, err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if a := acquireOne(t, worker); a.JobID != job.ID {
		t.Fatalf("approved worker got %s", a.JobID)
	}
	if _, err := admin.ApproveWorker(ctx, "ghost"); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("approve unknown: %v", err)
	}
	if _, err := admin.RevokeWorker(ctx, "gated-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ApproveWorker(ctx, "gated-1"); !client.IsCode(err, api.CodeConflict) {
		t.Fatalf("approve revoked: %v", err)
	}
}

// Instance tokens (ADR-0010): single use, bound to one instance id, the
// only credential a provider worker registers with.
func TestInstanceTokens(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	it, err := admin.CreateInstanceToken(ctx, api.CreateInstanceTokenRequest{InstanceID: "i-0abc"})
	if err != nil || !strings.HasPrefix(it.Token, "gli_") || it.MaxUses != 1 || it.ExpiresAt == "" || it.InstanceID != "i-0abc" {
		t.Fatalf("instance token %+v %v", it, err)
	}
	provider := func(id, instance string) []byte {
		return jsonBody(t, api.RegisterRequest{WorkerID: id, Origin: api.OriginProvider, InstanceID: instance, Capabilities: []string{"*"}})
	}
	uses := func() int {
		tk, err := h.Server.Store().Token(it.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tk.Uses
	}
	wantCode(t, "join token for a provider worker", call(t, h.URL, "POST", "/v1/workers/register", h.JoinToken, provider("p1", "i-0abc"), nil), 403, api.CodeForbidden)
	wantCode(t, "instance token without origin provider", call(t, h.URL, "POST", "/v1/workers/register", it.Token, []byte(`{"worker_id":"p1"}`), nil), 403, api.CodeForbidden)
	wantCode(t, "instance token for another instance", call(t, h.URL, "POST", "/v1/workers/register", it.Token, provider("p1", "i-other"), nil), 403, api.CodeForbidden)
	wantCode(t, "instance token elsewhere", call(t, h.URL, "GET", "/v1/jobs", it.Token, nil, nil), 403, api.CodeForbidden)
	if uses() != 0 {
		t.Fatal("a refused registration consumed the instance token")
	}
	var reg api.RegisterResponse
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/register", it.Token, provider("p1", "i-0abc"), nil), 201, &reg)
	if reg.Worker.Origin != api.OriginProvider || reg.Worker.InstanceID != "i-0abc" || reg.WorkerToken == "" {
		t.Fatalf("provider worker %+v", reg)
	}
	wantCode(t, "instance token reused", call(t, h.URL, "POST", "/v1/workers/register", it.Token, provider("p2", "i-0abc"), nil), 401, api.CodeUnauthenticated)
	if uses() != 1 {
		t.Fatalf("uses %d, want 1", uses())
	}
	if _, err := h.Client(t, reg.WorkerToken).Self(ctx); err != nil {
		t.Fatalf("provider worker's credential: %v", err)
	}
}

// Client roles: read reads, submit also submits and cancels its own jobs,
// admin does everything (the whole route table is walked in
// TestRouteCredentialMatrix).
func TestClientRoles(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	reader := h.Client(t, mintClient(t, h, "reader", "read"))
	alice := h.Client(t, mintClient(t, h, "alice", "submit"))
	bob := h.Client(t, mintClient(t, h, "bob", "submit"))

	if _, err := reader.SubmitJob(ctx, execJob()); !client.IsCode(err, api.CodeForbidden) {
		t.Fatalf("read role submits: %v", err)
	}
	mine, err := alice.SubmitJob(ctx, execJob())
	if err != nil || mine.CreatedBy != "alice" {
		t.Fatalf("submit role submits: %+v %v", mine, err)
	}
	if _, err := reader.Job(ctx, mine.ID); err != nil {
		t.Fatalf("read role reads: %v", err)
	}
	if _, err := reader.CancelJob(ctx, mine.ID); !client.IsCode(err, api.CodeForbidden) {
		t.Fatalf("read role cancels: %v", err)
	}
	if _, err := bob.CancelJob(ctx, mine.ID); !client.IsCode(err, api.CodeForbidden) {
		t.Fatalf("submit role cancels another's job: %v", err)
	}
	if _, err := alice.CancelJob(ctx, mine.ID); err != nil {
		t.Fatalf("submit role cancels its own job: %v", err)
	}
	theirs, _ := bob.SubmitJob(ctx, execJob())
	if _, err := admin.CancelJob(ctx, theirs.ID); err != nil {
		t.Fatalf("admin cancels any job: %v", err)
	}
	for name, c := range map[string]*client.Client{"read": reader, "submit": alice} {
		if _, err := c.Workers(ctx); !client.IsCode(err, api.CodeForbidden) {
			t.Errorf("%s role lists workers: %v", name, err)
		}
		if _, err := c.Tokens(ctx); !client.IsCode(err, api.CodeForbidden) {
			t.Errorf("%s role lists tokens: %v", name, err)
		}
	}
}

// `coordinator init --rotate` on a running cluster replaces every client,
// join and instance token at once; worker credentials are untouched.
func TestRotationWhileRunning(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	apiClient := mintClient(t, h, "scripted", "submit")
	apiJoin := mintJoin(t, admin, api.CreateTokenRequest{Name: "fleet"})
	workerTok, worker := enroll(t, h, "survivor")

	rot, err := coordinator.Init(h.DataDir, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	coordinatortest.WaitFor(t, 10*time.Second, "the rotation to take effect", func() bool {
		return call(t, h.URL, "GET", "/v1/jobs", h.AdminToken, nil, nil).status == 401
	})
	for name, tok := range map[string]string{"init join": h.JoinToken, "API client": apiClient, "API join": apiJoin.Token} {
		if r := call(t, h.URL, "GET", "/v1/jobs", tok, nil, nil); r.status != 401 && r.status != 403 {
			t.Errorf("%s token after rotation: %d", name, r.status)
		}
	}
	wantCode(t, "rotated join token registers", call(t, h.URL, "POST", "/v1/workers/register", apiJoin.Token, []byte(`{}`), nil), 401, api.CodeUnauthenticated)
	if self, err := worker.Self(ctx); err != nil || self.WorkerID != "survivor" {
		t.Fatalf("worker credential after rotation: %+v %v", self, err)
	}
	if r := call(t, h.URL, "POST", "/v1/workers/self/heartbeat", workerTok, []byte(`{}`), nil); r.status != 200 {
		t.Fatalf("heartbeat after rotation: %d %s", r.status, r.raw)
	}
	if _, err := h.Client(t, rot.AdminToken).Jobs(ctx, 1); err != nil {
		t.Fatalf("new admin token: %v", err)
	}
}
