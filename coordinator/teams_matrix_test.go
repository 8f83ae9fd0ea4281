package coordinator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// teamScope is how a route's answer depends on the caller's team.
type teamScope int

const (
	// teamNeutral: the team does not enter the answer (public, worker,
	// registration and admin-only routes): a token of either team with
	// the same role gets the same status.
	teamNeutral teamScope = iota
	// teamOwned: the route names a record of a team (a job, its logs, a
	// team, an artifact, an input at submit); another team's client gets
	// 404, exactly as for a record that does not exist; an admin of any
	// team gets what the owner gets.
	teamOwned
	// teamListed: the route lists records; a client sees its own team's
	// alone, an admin every team's.
	teamListed
)

// routeTeamScopes classifies every route of the table. A route missing
// here fails TestRouteTeamMatrix: a new route must say how teams apply.
var routeTeamScopes = map[string]teamScope{
	"GET /v1/jobs/{id}": teamOwned, "GET /v1/jobs/{id}/logs": teamOwned, "GET /v1/jobs/{id}/events": teamOwned, "POST /v1/jobs/{id}/cancel": teamOwned,
	"GET /v1/teams/{name}": teamOwned, "GET /v1/artifacts/{sha256}": teamOwned, "POST /v1/jobs": teamOwned,
	"GET /v1/jobs": teamListed, "GET /v1/teams": teamListed, "GET /v1/usage": teamListed, "GET /v1/queue": teamListed,

	"GET /v1/status/health": teamNeutral, "GET /v1/status/leader": teamNeutral, "GET /v1/status/peers": teamNeutral,
	"GET /v1/status/self": teamNeutral, "GET /v1/openapi.json": teamNeutral, "POST /v1/operator/raft/peers": teamNeutral,
	"DELETE /v1/operator/raft/peers/{id}": teamNeutral, "GET /v1/operator/snapshot": teamNeutral, "PUT /v1/operator/snapshot": teamNeutral,
	"GET /v1/operator/local/digest": teamNeutral, "POST /v1/operator/gc": teamNeutral, "PUT /v1/operator/nodes/{id}": teamNeutral,
	"GET /v1/operator/local/artifacts/{sha256}": teamNeutral, "POST /v1/operator/local/artifacts/{sha256}/copy": teamNeutral,
	"PUT /v1/operator/artifacts/{sha256}/holders/{id}": teamNeutral, "GET /metrics": teamNeutral, "GET /ui": teamNeutral,
	"GET /ui/{path...}": teamNeutral, "GET /v1/workers": teamNeutral, "GET /v1/workers/{id}": teamNeutral,
	"DELETE /v1/workers/{id}": teamNeutral, "GET /v1/gpus": teamNeutral, "POST /v1/workers/{id}/reissue": teamNeutral,
	"POST /v1/workers/{id}/revoke": teamNeutral, "POST /v1/workers/{id}/drain": teamNeutral, "POST /v1/workers/{id}/stop": teamNeutral,
	"POST /v1/workers/{id}/resume": teamNeutral, "POST /v1/workers/{id}/gpus/{uuid}/clear": teamNeutral,
	"POST /v1/workers/{id}/gpus/approve": teamNeutral, "POST /v1/workers/{id}/devices/{uuid}/cordon": teamNeutral,
	"POST /v1/workers/{id}/devices/{uuid}/uncordon": teamNeutral, "POST /v1/workers/{id}/devices/{uuid}/drain": teamNeutral,
	"PUT /v1/workers/{id}/devices/{uuid}/mig": teamNeutral, "DELETE /v1/workers/{id}/devices/{uuid}/mig": teamNeutral,
	"POST /v1/teams": teamNeutral, "PATCH /v1/teams/{name}": teamNeutral, "DELETE /v1/teams/{name}": teamNeutral,
	"POST /v1/groups": teamNeutral, "GET /v1/groups": teamNeutral, "GET /v1/groups/{id}": teamNeutral, "DELETE /v1/groups/{id}": teamNeutral,
	"POST /v1/groups/{id}/members": teamNeutral, "DELETE /v1/groups/{id}/members/{kind}/{member}": teamNeutral,
	"POST /v1/workers/{id}/approve": teamNeutral, "POST /v1/tokens": teamNeutral, "GET /v1/tokens": teamNeutral,
	"GET /v1/tokens/{id}": teamNeutral, "DELETE /v1/tokens/{id}": teamNeutral, "POST /v1/instance-tokens": teamNeutral, "GET /v1/instance-tokens": teamNeutral,
	"POST /v1/clusters": teamNeutral, "GET /v1/clusters": teamNeutral, "GET /v1/clusters/{key}": teamNeutral,
	"POST /v1/enrollments": teamNeutral, "GET /v1/enrollments": teamNeutral, "GET /v1/enrollments/{key}": teamNeutral,
	"POST /v1/enrollments/{key}/revoke": teamNeutral, "GET /v1/audit": teamNeutral, "PUT /v1/artifacts/{sha256}": teamNeutral,
	"POST /v1/workers/enroll": teamNeutral, "POST /v1/auth/oidc": teamNeutral, "GET /v1/auth/self": teamNeutral,
	"POST /v1/workers/register": teamNeutral, "GET /v1/workers/self": teamNeutral, "POST /v1/workers/self/heartbeat": teamNeutral,
	"POST /v1/workers/self/acquire": teamNeutral, "POST /v1/workers/self/drain": teamNeutral, "POST /v1/workers/self/resume": teamNeutral,
	"POST /v1/workers/self/deregister": teamNeutral, "POST /v1/tasks/{id}/start": teamNeutral, "POST /v1/tasks/{id}/logs": teamNeutral,
	"POST /v1/tasks/{id}/finish": teamNeutral, "POST /v1/tasks/{id}/fail": teamNeutral, "POST /v1/tasks/{id}/rendezvous": teamNeutral,
	// Exec into a task names the task's job; attaching names a session,
	// which only its opener holds (an unknown one is 404 to every team).
	"POST /v1/tasks/{id}/exec": teamOwned, "GET /v1/exec/{id}": teamNeutral, "POST /v1/exec/{id}": teamNeutral,
	"GET /v1/workers/self/exec/{id}": teamNeutral,
}

// ownedTarget is the request a teamOwned route is called with: alpha's
// record, and the status alpha's own client with the role gets.
type ownedTarget struct {
	path string
	body []byte
	own  int
	// ownFor, where set, overrides own for a role of the owning team
	// (exec: a read token of the job's team is answered as a stranger).
	ownFor map[string]int
	// byCaller, where set, gives each caller ("role/team") a path of its
	// own (a job each to cancel).
	byCaller map[string]string
}

// teamCaller is a client token of one role in one team.
type teamCaller struct {
	role, team, token string
}

// teamMatrixFixture is a coordinator with teams alpha and beta, a
// client token of every role in each, and alpha's records: a pending
// job submitted by alpha's submit token, an artifact alpha uploaded, and
// GPU time of alpha's in the usage table (a finished one-GPU job).
type teamMatrixFixture struct {
	h       *coordinatortest.Harness
	callers []teamCaller
	job     string
	digest  string
	// task is alpha's finished one-GPU task.
	task string
	// cancel holds a pending job of alpha's for each caller to cancel.
	cancel map[string]string
}

func newTeamMatrixFixture(t *testing.T) teamMatrixFixture {
	t.Helper()
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: behindLoopbackProxy})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	f := teamMatrixFixture{h: h}
	tokens := map[string]string{}
	for _, team := range []string{"alpha", "beta"} {
		if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: team}); err != nil {
			t.Fatal(err)
		}
		for _, role := range auth.Roles {
			tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: team + "-" + role, Roles: []string{role}, Team: team})
			if err != nil {
				t.Fatal(err)
			}
			f.callers = append(f.callers, teamCaller{role: role, team: team, token: tok.Token})
			tokens[team+"-"+role] = tok.Token
		}
	}
	alpha := h.Client(t, tokens["alpha-submit"])
	content := []byte("alpha's weights")
	sum := sha256.Sum256(content)
	f.digest = hex.EncodeToString(sum[:])
	if _, err := alpha.PutArtifact(ctx, f.digest, content); err != nil {
		t.Fatal(err)
	}
	dev := api.Device{Index: 0, UUID: "GPU-matrix-0", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true, Health: api.HealthHealthy}
	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w-matrix", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: []api.Device{dev}})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := alpha.SubmitJob(ctx, api.JobSpec{Executor: "exec", Resources: &api.Resources{GPUs: 1}, Config: []byte(`{"command":"true"}`)}); err != nil {
		t.Fatal(err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	f.task = acq.Task.ID
	f.cancel = map[string]string{}
	for _, c := range append([]teamCaller{{}}, f.callers...) {
		job, err := alpha.SubmitJob(ctx, api.JobSpec{Executor: "other", Config: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		if c.role == "" {
			f.job = job.ID
		} else {
			f.cancel[c.role+"/"+c.team] = "/v1/jobs/" + job.ID + "/cancel"
		}
	}
	return f
}

// TestRouteTeamMatrix walks the route table with a client token of every
// role in the owning team (alpha) and in another (beta). A role the route
// does not allow is 403 in either team. A route naming alpha's record
// answers alpha's token as the owner and beta's read and submit tokens
// 404 (existence does not leak); an admin of either team is
// cluster-wide. A list answers a client its own team's records only, an
// admin every team's. Any other route answers both teams alike. Every
// route must be classified in routeTeamScopes.
func TestRouteTeamMatrix(t *testing.T) {
	f := newTeamMatrixFixture(t)
	spec, _ := json.Marshal(api.JobSpec{Executor: "other", Config: []byte(`{}`), Inputs: []api.ArtifactRef{{SHA256: f.digest, Path: "w"}}})
	owned := map[string]ownedTarget{
		"GET /v1/jobs/{id}":          {path: "/v1/jobs/" + f.job, own: http.StatusOK},
		"GET /v1/jobs/{id}/logs":     {path: "/v1/jobs/" + f.job + "/logs", own: http.StatusOK},
		"GET /v1/jobs/{id}/events":   {path: "/v1/jobs/" + f.job + "/events", own: http.StatusOK},
		"GET /v1/teams/{name}":       {path: "/v1/teams/alpha", own: http.StatusOK},
		"GET /v1/artifacts/{sha256}": {path: "/v1/artifacts/" + f.digest, own: http.StatusOK},
		// A job whose input is alpha's artifact.
		"POST /v1/jobs": {path: "/v1/jobs", body: spec, own: http.StatusCreated},
		// Each caller cancels a job of its own (submitted by alpha's
		// submit token, whose role cancels its own jobs).
		"POST /v1/jobs/{id}/cancel": {byCaller: f.cancel, body: []byte(`{}`), own: http.StatusOK},
		// Exec into alpha's finished task: its team's submit token and an
		// admin are told it is not running; a read token, even alpha's,
		// is told the task does not exist.
		"POST /v1/tasks/{id}/exec": {path: "/v1/tasks/" + f.task + "/exec", body: []byte(`{"command":["true"]}`),
			own: http.StatusConflict, ownFor: map[string]int{auth.RoleRead: http.StatusNotFound}},
	}
	path := strings.NewReplacer("{id}", "x", "{key}", "x", "{kind}", "worker", "{member}", "x", "{sha256}", strings.Repeat("a", 64),
		"{uuid}", "x", "{path...}", "app.js", "{name}", "x")
	pairs := 0
	for _, rt := range f.h.Server.Routes() {
		key := rt.Method + " " + rt.Pattern
		scope, ok := routeTeamScopes[key]
		if !ok {
			t.Errorf("route %s is not in routeTeamScopes: say whether it is team-neutral, names a team's record or lists them", key)
			continue
		}
		target := ownedTarget{path: path.Replace(rt.Pattern), body: []byte(`{}`)}
		if scope == teamOwned {
			if target, ok = owned[key]; !ok {
				t.Fatalf("route %s names a team's record but has no target here", key)
			}
		}
		// Each role: the other team first, so that a refusal cannot hide
		// behind a change the owner's call made.
		for _, role := range auth.Roles {
			got := map[string]rawResp{}
			for _, team := range []string{"beta", "alpha"} {
				c, p := f.caller(role, team), target.path
				if target.byCaller != nil {
					p = target.byCaller[role+"/"+team]
				}
				got[team] = call(t, f.h.URL, rt.Method, p, c.token, target.body, nil)
				pairs++
			}
			checkTeamPair(t, key, scope, role, rt.Access.Allows(auth.KindClient, []string{role}), target, got)
		}
	}
	if want := 3 * 2 * len(routeTeamScopes); pairs != want {
		t.Errorf("%d route × role × team calls, want %d", pairs, want)
	}
	if !t.Failed() {
		t.Logf("%d route × role × team calls answered as expected", pairs)
	}
}

func (f teamMatrixFixture) caller(role, team string) teamCaller {
	for _, c := range f.callers {
		if c.role == role && c.team == team {
			return c
		}
	}
	panic("no caller " + role + " in " + team)
}

// checkTeamPair checks what one role got as alpha (own) and as beta
// (other).
func checkTeamPair(t *testing.T, route string, scope teamScope, role string, allowed bool, target ownedTarget, got map[string]rawResp) {
	t.Helper()
	own, other := got["alpha"], got["beta"]
	want := func(team string, r rawResp, status int) {
		t.Helper()
		if r.status != status {
			t.Errorf("%s, %s of %s: %d %s, want %d", route, role, team, r.status, r.raw, status)
		}
	}
	switch {
	case !allowed:
		want("alpha", own, http.StatusForbidden)
		want("beta", other, http.StatusForbidden)
	case scope == teamOwned:
		ownStatus := target.own
		if s, ok := target.ownFor[role]; ok {
			ownStatus = s
		}
		want("alpha", own, ownStatus)
		if role == auth.RoleAdmin {
			want("beta", other, ownStatus)
		} else {
			want("beta", other, http.StatusNotFound)
		}
	case scope == teamListed:
		want("alpha", own, http.StatusOK)
		want("beta", other, http.StatusOK)
		if !strings.Contains(string(own.raw), `"alpha"`) {
			t.Errorf("%s, %s of alpha: its own team's records are missing: %s", route, role, own.raw)
		}
		if sees := strings.Contains(string(other.raw), `"alpha"`); sees != (role == auth.RoleAdmin) {
			t.Errorf("%s, %s of beta: sees alpha's records %v, want %v: %s", route, role, sees, role == auth.RoleAdmin, other.raw)
		}
	default:
		if own.status != other.status || own.status == http.StatusUnauthorized || own.status == http.StatusForbidden {
			t.Errorf("%s, %s: alpha's token %d, beta's %d: a team-neutral route answers both teams alike and lets the role in", route, role, own.status, other.status)
		}
	}
}
