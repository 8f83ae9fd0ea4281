package uitest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-jose/go-jose/v4"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/internal/oidctest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// teamFleet is a coordinator with single sign-on against an in-process
// OpenID provider (alice's group maps to team vision, role read), teams
// vision and nlp, a worker with two GPUs, and work of both teams: a
// finished job each (their GPU time is in the usage table), and a
// running and a pending job of vision.
type teamFleet struct {
	h                *coordinatortest.Harness
	idp              *oidctest.Provider
	visionRun        string
	visionWait       string
	visionDone       string
	nlpDone, nlpWait string
}

func newTeamFleet(t *testing.T) *teamFleet {
	t.Helper()
	idp := oidctest.Start(t, jose.RS256)
	idp.SetGroups("alice", "vision")
	// The coordinator's clock is a fake one set to now: a finished task's
	// GPU time is then the seconds the fixture says, not the fraction of
	// a millisecond a start and a finish take back to back (which reads
	// 0 and draws no bar).
	clk := clock.NewFake(time.Now())
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		cfg.Clock = clk
		cfg.HeartbeatInterval = time.Minute
		cfg.OIDC = oidc.Config{Issuer: idp.Issuer, Audience: oidctest.ClientID, Mappings: []oidc.Mapping{{Value: "vision", Team: "vision", Roles: []string{"read"}}}}
	}})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	borrow := api.GPUAmount{GPUs: 1}
	weight := 2.0
	for _, req := range []api.CreateTeamRequest{
		{Name: "vision", Weight: &weight, Quota: api.QuotaGPUs(2), BorrowLimit: &borrow},
		{Name: "nlp", Quota: api.QuotaGPUs(1)},
	} {
		if _, err := admin.CreateTeam(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	submitter := func(team string) *client.Client {
		tok, err := admin.CreateToken(ctx, api.CreateTokenRequest{Kind: api.TokenKindClient, Name: team + "-ci", Roles: []string{"submit"}, Team: team})
		if err != nil {
			t.Fatal(err)
		}
		return h.Client(t, tok.Token)
	}
	vision, nlp := submitter("vision"), submitter("nlp")

	reg, err := h.Client(t, h.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "gpu-node-1", Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: devices()[:2]})
	if err != nil {
		t.Fatal(err)
	}
	worker := h.Client(t, reg.WorkerToken)
	if _, err := worker.Heartbeat(ctx, api.HeartbeatRequest{Devices: devices()[:2], Executors: []string{"exec"}}); err != nil {
		t.Fatal(err)
	}
	f := &teamFleet{h: h, idp: idp}
	// place submits a one-GPU job and has the worker start its task; a
	// finished one ends after two seconds of GPU time.
	place := func(c *client.Client, name string, finish bool) string {
		job, err := c.SubmitJob(ctx, api.JobSpec{Name: name, Executor: "exec", Resources: &api.Resources{GPUs: 1}, Config: []byte(`{"command":"true"}`)})
		if err != nil {
			t.Fatal(err)
		}
		acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
		if err != nil || acq.Task == nil || acq.Task.JobID != job.ID {
			t.Fatalf("acquire for %s: %+v %v", job.ID, acq, err)
		}
		if err := worker.Start(ctx, acq.Task.ID, acq.Task.AttemptID); err != nil {
			t.Fatal(err)
		}
		if finish {
			clk.Advance(2 * time.Second)
			if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID}); err != nil {
				t.Fatal(err)
			}
		}
		return job.ID
	}
	f.visionDone = place(vision, "vision-eval", true)
	f.nlpDone = place(nlp, "nlp-eval", true)
	f.visionRun = place(vision, "vision-train", false)
	pending := func(c *client.Client, name string) string {
		job, err := c.SubmitJob(ctx, api.JobSpec{Name: name, Executor: "exec", Resources: &api.Resources{GPUs: 1, GPUModel: "A100"}, Config: []byte(`{"command":"true"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return job.ID
	}
	f.visionWait, f.nlpWait = pending(vision, "vision-a100"), pending(nlp, "nlp-a100")
	return f
}

// ssoToken has alice sign in at the provider and exchanges her ID token
// for a client token, as gpulayer login does.
func (f *teamFleet) ssoToken(t *testing.T) string {
	t.Helper()
	c := f.h.Client(t, "")
	var out api.OIDCExchangeResponse
	if err := c.Do(t.Context(), http.MethodPost, api.PathAuthOIDC, api.OIDCExchangeRequest{IDToken: f.idp.IDToken(t, "alice")}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Token
}

func teamRow(name string) chromedp.CSS { return chromedp.CSS(`tr.team-row[data-team="` + name + `"]`) }

func chartBar(series string) chromedp.CSS {
	return chromedp.CSS(`svg#usage-chart rect.bar[data-series="` + series + `"]`)
}

// TestTeamsView signs in with a token from single sign-on (a read token
// of team vision) and then with the admin token, and checks the teams
// view: the top bar names the token's team and roles; vision's member
// sees vision alone, with its settings, live figures, its running and
// pending jobs and its GPU time drawn in the SVG chart, and nothing of
// nlp; the admin sees every team, and both teams' bars in the chart.
func TestTeamsView(t *testing.T) {
	browserPath(t)
	f := newTeamFleet(t)
	b := newBrowser(t, f.h.URL)
	token := f.ssoToken(t)

	b.do("open the dashboard", chromedp.Navigate(f.h.URL+"/ui#teams"), chromedp.WaitVisible(chromedp.ID("token")))
	b.do("sign in with the single sign-on token", chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("whoami")))
	if who := b.text("#whoami"); !strings.Contains(who, "team vision") || !strings.Contains(who, "read") || !strings.HasPrefix(who, "sso-alice") || !strings.Contains(who, "expires in") {
		t.Errorf("the top bar says %q, want alice's SSO token, team vision, read, and its expiry", who)
	}
	b.do("the teams view", showView("teams"), chromedp.WaitVisible(teamRow("vision")), chromedp.WaitVisible(chartBar("vision")),
		chromedp.WaitVisible(chromedp.CSS(`tr.work-row[data-job="`+f.visionWait+`"]`)))
	if n := eval[int](b, `document.querySelectorAll("tr.team-row").length`); n != 1 {
		t.Errorf("vision's member sees %d teams, want its own alone", n)
	}
	cells := eval[[]string](b, `Array.from(document.querySelectorAll('tr.team-row[data-team="vision"] td'), c => c.textContent)`)
	if want := []string{"vision", "2", "2", "1", "1", "1", "1"}; strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("vision's row: cells %q, want %q (name, weight, quota, borrow limit, GPUs in use, running, pending)", cells, want)
	}
	work := eval[[]string](b, `Array.from(document.querySelectorAll("tr.work-row"), r => r.dataset.job)`)
	if strings.Join(work, ",") != f.visionWait+","+f.visionRun {
		t.Errorf("vision's work lists %v, want its pending %s and running %s jobs, newest first", work, f.visionWait, f.visionRun)
	}
	if n := eval[int](b, `document.querySelectorAll('svg#usage-chart rect.bar:not([data-series="vision"])').length`); n != 0 {
		t.Errorf("vision's member sees %d bars of other teams", n)
	}
	visionHours := eval[float64](b, `Array.from(document.querySelectorAll('svg#usage-chart rect.bar'), r => +r.dataset.value).reduce((a, b) => a + b, 0)`)
	want := f.usageHours(t, "vision")
	if diff := visionHours - want; diff > 1e-9 || diff < -1e-9 || want <= 0 {
		t.Errorf("the chart draws %g GPU-hours for vision, the usage API answers %g", visionHours, want)
	}
	b.shot("teams-01-sso-member")
	b.checkNoStorage(token)

	b.do("sign out", chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")))
	if eval[bool](b, `!document.getElementById("whoami").hidden`) {
		t.Error("the top bar still names the signed-out token")
	}
	b.do("sign in as admin", chromedp.SendKeys(chromedp.ID("token"), f.h.AdminToken), chromedp.Click(chromedp.ID("signin-button")),
		chromedp.WaitVisible(chromedp.ID("whoami")))
	b.do("every team", showView("teams"), chromedp.WaitVisible(teamRow("nlp")), chromedp.WaitVisible(teamRow("default")))
	b.do("every team's bars and work", chromedp.WaitVisible(chartBar("nlp")), chromedp.WaitVisible(chartBar("vision")),
		chromedp.WaitVisible(chromedp.CSS(`div[data-team-work="nlp"] tr.work-row[data-job="`+f.nlpWait+`"]`)))
	if who := b.text("#whoami"); !strings.Contains(who, "admin") {
		t.Errorf("the admin's top bar says %q", who)
	}
	for _, team := range []string{"vision", "nlp"} {
		drawn := eval[float64](b, fmt.Sprintf(`Array.from(document.querySelectorAll('svg#usage-chart rect.bar[data-series=%q]'), r => +r.dataset.value).reduce((a, b) => a + b, 0)`, team))
		if want := f.usageHours(t, team); drawn-want > 1e-9 || want-drawn > 1e-9 {
			t.Errorf("the admin's chart draws %g GPU-hours for %s, the usage API answers %g", drawn, team, want)
		}
	}
	if legend := eval[[]string](b, `Array.from(document.querySelectorAll("ul.legend li"), l => l.dataset.series)`); strings.Join(legend, ",") != "default,nlp,vision" {
		t.Errorf("the admin's legend lists %v, want every team", legend)
	}
	// Each bar has its team's colour in the legend.
	if bad := eval[int](b, `Array.from(document.querySelectorAll("svg#usage-chart rect.bar")).filter(r =>
		document.querySelector('ul.legend li[data-series="' + r.dataset.series + '"] rect').getAttribute("fill") !== r.getAttribute("fill")).length`); bad != 0 {
		t.Errorf("%d bars are not in their team's legend colour", bad)
	}
	b.shot("teams-02-admin")

	requests, problems := b.seen()
	for _, u := range requests {
		if !strings.HasPrefix(u, f.h.URL+"/") {
			t.Errorf("the page asked another origin: %s", u)
		}
	}
	for _, p := range problems {
		t.Errorf("in the page: %s", p)
	}
}

// usageHours is a team's GPU-hours over the last day, from the usage
// API directly.
func (f *teamFleet) usageHours(t *testing.T, team string) float64 {
	t.Helper()
	now := time.Now()
	from := now.Truncate(time.Hour).Add(-23 * time.Hour)
	var u api.UsageResponse
	path := "/v1/usage?group_by=team&from=" + from.UTC().Format(time.RFC3339) + "&to=" + from.Add(24*time.Hour).UTC().Format(time.RFC3339)
	if err := f.h.Client(t, f.h.AdminToken).Do(t.Context(), http.MethodGet, path, nil, &u); err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, r := range u.Rows {
		if r.Team == team {
			s += r.GPUSeconds / 3600
		}
	}
	return s
}
