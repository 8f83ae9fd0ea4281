package coordinator_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// mintTeamClient creates a client token of a team and returns it.
func mintTeamClient(t *testing.T, h *coordinatortest.Harness, name, team string, roles ...string) string {
	t.Helper()
	out, err := h.Client(t, h.AdminToken).CreateToken(t.Context(), api.CreateTokenRequest{Kind: api.TokenKindClient, Name: name, Roles: roles, Team: team})
	if err != nil || out.Token == "" || out.Team != team {
		t.Fatalf("create client token %s in %s: %+v %v", name, team, out, err)
	}
	return out.Token
}

// A client token acts within its team: it sees, follows and cancels its
// team's jobs only, and another team's job answers exactly as a job that
// does not exist; it lists and reads its own team only. An admin sees
// every team and job. Each job records its team.
func TestTeamsScopeClientTokens(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision", Quota: api.QuotaGPUs(4)}); err != nil {
		t.Fatal(err)
	}
	aliceToken, bobTok := mintTeamClient(t, h, "alice", "vision", "submit"), mintTeamClient(t, h, "bob", api.DefaultTeam, "submit")
	alice, bob := h.Client(t, aliceToken), h.Client(t, bobTok)
	viewer := h.Client(t, mintTeamClient(t, h, "viewer", "vision", "read"))
	spec := api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}
	aj, err := alice.SubmitJob(ctx, spec)
	if err != nil || aj.Team != "vision" {
		t.Fatalf("alice's job: %+v %v", aj, err)
	}
	bj, err := bob.SubmitJob(ctx, spec)
	if err != nil || bj.Team != api.DefaultTeam {
		t.Fatalf("bob's job: %+v %v", bj, err)
	}

	// Another team's job, and a job that does not exist, answer alike.
	missing := "j" + strings.Repeat("0", 16)
	for _, c := range []struct {
		what, path, method string
	}{
		{"read", "/v1/jobs/%s", "GET"},
		{"follow the logs of", "/v1/jobs/%s/logs", "GET"},
		{"cancel", "/v1/jobs/%s/cancel", "POST"},
	} {
		foreign := call(t, h.URL, c.method, strings.Replace(c.path, "%s", aj.ID, 1), bobTok, nil, nil)
		absent := call(t, h.URL, c.method, strings.Replace(c.path, "%s", missing, 1), bobTok, nil, nil)
		wantCode(t, "bob "+c.what+" alice's job", foreign, 404, api.CodeNotFound)
		wantCode(t, "bob "+c.what+" a missing job", absent, 404, api.CodeNotFound)
		if got, want := strings.ReplaceAll(foreign.body.Error.Message, aj.ID, "ID"), strings.ReplaceAll(absent.body.Error.Message, missing, "ID"); got != want {
			t.Errorf("bob %s: another team's job answers %s, a missing one %s", c.what, got, want)
		}
	}
	listed := func(c *client.Client) []string {
		t.Helper()
		page, err := c.JobsPage(ctx, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := listed(bob); !slices.Equal(got, []string{bj.ID}) {
		t.Errorf("bob lists %v, want only his team's %s", got, bj.ID)
	}
	if got := listed(viewer); !slices.Equal(got, []string{aj.ID}) {
		t.Errorf("vision's reader lists %v, want %s", got, aj.ID)
	}
	if got, want := listed(admin), sortedOf(aj.ID, bj.ID); !slices.Equal(got, want) {
		t.Errorf("admin lists %v, want %v", got, want)
	}
	if j, err := viewer.Job(ctx, aj.ID); err != nil || j.Team != "vision" {
		t.Errorf("vision's reader reads alice's job: %+v %v", j, err)
	}
	if _, err := bob.CancelJob(ctx, bj.ID); err != nil {
		t.Errorf("bob cancels his own job: %v", err)
	}

	// Teams: a client sees its own; another team's is not found.
	if ts, err := alice.Teams(ctx); err != nil || len(ts) != 1 || ts[0].Name != "vision" || ts[0].Quota.GPUs != 4 || ts[0].Usage.PendingTasks != 1 {
		t.Errorf("alice's teams: %+v %v", ts, err)
	}
	if _, err := alice.Team(ctx, api.DefaultTeam); !client.IsCode(err, api.CodeNotFound) {
		t.Errorf("alice reads default: %v, want not_found", err)
	}
	if ts, err := admin.Teams(ctx); err != nil || len(ts) != 2 {
		t.Errorf("admin's teams: %+v %v", ts, err)
	}
	if _, err := admin.DeleteTeam(ctx, "vision"); !client.IsCode(err, api.CodeConflict) {
		t.Errorf("delete a team with an unfinished job: %v, want conflict", err)
	}
	if _, err := alice.CancelJob(ctx, aj.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.DeleteTeam(ctx, "vision"); err != nil {
		t.Fatalf("delete a team whose jobs ended: %v", err)
	}
	if _, err := alice.Jobs(ctx, 10); !client.IsCode(err, api.CodeUnauthenticated) {
		t.Errorf("a deleted team's token still works: %v", err)
	}
}

func sortedOf(ids ...string) []string {
	slices.Sort(ids)
	return ids
}
