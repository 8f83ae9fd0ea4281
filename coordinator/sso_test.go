package coordinator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/internal/oidctest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// ssoFixture is a coordinator with single sign-on against an in-process
// provider: alice is in ml (read), bob in ops (admin), carol in finance
// (mapped to nothing).
type ssoFixture struct {
	p    *oidctest.Provider
	h    *coordinatortest.Harness
	logs *syncBuffer
}

func newSSOFixture(t *testing.T, tweak func(*coordinator.Config)) ssoFixture {
	t.Helper()
	p := oidctest.Start(t, jose.RS256)
	p.SetGroups("alice", "ml")
	p.SetGroups("bob", "ops", "ml")
	p.SetGroups("carol", "finance")
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := coordinatortest.Start(t, coordinatortest.Options{Logger: logger, Tweak: func(c *coordinator.Config) {
		c.AuditFlush = 20 * time.Millisecond
		c.OIDC = oidc.Config{Issuer: p.Issuer, Audience: oidctest.ClientID, Mappings: []oidc.Mapping{
			{Value: "ops", Team: "ops", Roles: []string{"admin"}},
			{Value: "ml", Team: "ml", Roles: []string{"read"}},
		}}
		if tweak != nil {
			tweak(c)
		}
	}})
	for _, team := range []string{"ops", "ml"} { // the teams the mappings name
		if _, err := h.Client(t, h.AdminToken).CreateTeam(t.Context(), api.CreateTeamRequest{Name: team}); err != nil {
			t.Fatal(err)
		}
	}
	return ssoFixture{p: p, h: h, logs: logs}
}

func exchange(t *testing.T, h *coordinatortest.Harness, idToken string) rawResp {
	t.Helper()
	body, _ := json.Marshal(api.OIDCExchangeRequest{IDToken: idToken})
	return call(t, h.URL, "POST", api.PathAuthOIDC, "", body, nil)
}

func mustExchange(t *testing.T, h *coordinatortest.Harness, idToken string) api.OIDCExchangeResponse {
	t.Helper()
	r := exchange(t, h, idToken)
	var out api.OIDCExchangeResponse
	if r.status != 201 || json.Unmarshal(r.raw, &out) != nil || !strings.HasPrefix(out.Token, api.PrefixClient+"_") {
		t.Fatalf("exchange: %d %s", r.status, r.raw)
	}
	return out
}

// TestSSOExchangeMintsScopedClientToken: a provider-issued ID token
// becomes a client token with the mapped roles, through the replicated
// token path, ending with the ID token's session; it reads and is
// refused on admin routes; an admin mapping may use them. The audit log
// names issuer and subject; neither the logs nor the audit hold an ID
// token or a minted token.
func TestSSOExchangeMintsScopedClientToken(t *testing.T) {
	f := newSSOFixture(t, nil)
	h := f.h
	aliceID := f.p.IDToken(t, "alice")
	before := time.Now()
	alice := mustExchange(t, h, aliceID)
	if alice.Team != "ml" || !slices.Equal(alice.Roles, []string{"read"}) || alice.Subject != "alice" {
		t.Fatalf("answer %+v", alice)
	}
	exp, err := time.Parse(time.RFC3339Nano, alice.ExpiresAt)
	if err != nil || !exp.After(before) || exp.After(before.Add(oidc.MaxSession)) {
		t.Fatalf("expires_at %q: %v", alice.ExpiresAt, err)
	}

	// The read route answers; submit and admin routes refuse.
	if r := call(t, h.URL, "GET", "/v1/jobs", alice.Token, nil, nil); r.status != 200 {
		t.Fatalf("read with the SSO token: %d %s", r.status, r.raw)
	}
	for _, rt := range [][2]string{{"GET", "/v1/workers"}, {"GET", "/v1/tokens"}, {"POST", "/v1/jobs"}} {
		r := call(t, h.URL, rt[0], rt[1], alice.Token, []byte(`{}`), nil)
		if r.status != 403 || r.body.Error == nil || r.body.Error.Code != api.CodeForbidden {
			t.Fatalf("%s %s with a read SSO token: %d %s", rt[0], rt[1], r.status, r.raw)
		}
	}
	// Every route that needs more than read, or another kind of
	// credential, refuses the read SSO token with 403.
	path := strings.NewReplacer("{id}", "x", "{key}", "x", "{kind}", "worker", "{member}", "x", "{sha256}", strings.Repeat("a", 64), "{uuid}", "x", "{path...}", "x")
	refused := 0
	for _, rt := range h.Server.Routes() {
		if rt.Access.Public() || rt.Access.Allows(auth.KindClient, []string{auth.RoleRead}) {
			continue
		}
		r := call(t, h.URL, rt.Method, path.Replace(rt.Pattern), alice.Token, []byte(`{}`), nil)
		if r.status != 403 || r.body.Error == nil || r.body.Error.Code != api.CodeForbidden {
			t.Errorf("%s %s with a read SSO token: %d %s", rt.Method, rt.Pattern, r.status, r.raw)
		}
		refused++
	}
	if refused < 40 {
		t.Fatalf("only %d routes walked", refused)
	}
	// bob's groups map to ops first (config order): admin.
	bobID := f.p.IDToken(t, "bob")
	bob := mustExchange(t, h, bobID)
	if bob.Team != "ops" || !slices.Equal(bob.Roles, []string{"admin"}) {
		t.Fatalf("bob %+v", bob)
	}
	if r := call(t, h.URL, "GET", "/v1/workers", bob.Token, nil, nil); r.status != 200 {
		t.Fatalf("admin route with an admin SSO token: %d %s", r.status, r.raw)
	}
	// A second login of alice is a second token (names are unique).
	again := mustExchange(t, h, f.p.IDToken(t, "alice"))

	// The record: hashed, named for the subject, created by issuer+subject.
	admin := h.Client(t, h.AdminToken)
	list, err := admin.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tk := range list {
		if strings.HasPrefix(tk.Name, "sso-") {
			names = append(names, tk.Name)
			if !strings.Contains(tk.CreatedBy, "iss="+f.p.Issuer) || tk.ExpiresAt == "" {
				t.Errorf("token record %+v", tk)
			}
		}
	}
	if len(names) != 3 || !strings.HasPrefix(names[0], "sso-") {
		t.Fatalf("SSO token records %v", names)
	}

	// Audit: the creation names issuer and subject.
	var events []api.AuditEvent
	coordinatortest.WaitFor(t, 10*time.Second, "the three SSO creations, naming issuer and subject, in the audit", func() bool {
		al, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"token"}})
		if err != nil {
			t.Fatal(err)
		}
		events = al.Events
		n := 0
		for _, ev := range events {
			if ev.Kind == "token.created" && strings.Contains(ev.Actor, "iss="+f.p.Issuer) && (strings.HasSuffix(ev.Actor, "sub=alice") || strings.HasSuffix(ev.Actor, "sub=bob")) {
				n++
			}
		}
		return n == 3
	})
	// secretsIn knows the project's tokens (prefix_id_secret); an ID token
	// is a JWT, whose last "_" may fall anywhere, so it is looked for
	// whole and by its signature.
	secrets := []string{alice.Token, bob.Token, again.Token}
	idTokens := []string{aliceID, bobID}
	auditJSON, _ := json.Marshal(events)
	if leaked := append(secretsIn(auditJSON, secrets), jwtsIn(auditJSON, idTokens)...); len(leaked) > 0 {
		t.Fatalf("the audit holds %v", leaked)
	}
	out := f.logs.Bytes()
	if !bytes.Contains(out, []byte("single sign-on")) {
		t.Fatalf("the log did not capture the exchanges (%d bytes)", len(out))
	}
	if leaked := append(secretsIn(out, secrets), jwtsIn(out, idTokens)...); len(leaked) > 0 {
		t.Fatalf("the logs hold %d secrets: %v", len(leaked), leaked)
	}
}

// TestSSOExchangeRefusals: every bad ID token is 401 with one message,
// an unmapped subject 403, a bad body 400; none changes the state, and
// none leaks the token into the answer or the logs.
func TestSSOExchangeRefusals(t *testing.T) {
	f := newSSOFixture(t, nil)
	h, p := f.h, f.p
	good := func() map[string]any { return p.Claims("alice", oidctest.ClientID, time.Hour, "ml") }
	wrongIss := good()
	wrongIss["iss"] = "https://evil.example"
	carolID := p.IDToken(t, "carol")
	var tokens []string
	for _, tc := range []struct {
		name   string
		token  string
		status int
		code   api.Code
	}{
		{"expired", p.Forge(t, p.Claims("alice", oidctest.ClientID, -time.Minute, "ml")), 401, api.CodeUnauthenticated},
		{"wrong audience", p.Forge(t, p.Claims("alice", "other-app", time.Hour, "ml")), 401, api.CodeUnauthenticated},
		{"wrong issuer", p.Forge(t, wrongIss), 401, api.CodeUnauthenticated},
		{"alg none", p.ForgeNone(t, good()), 401, api.CodeUnauthenticated},
		{"HS256 keyed by the public key", p.ForgeHS256WithPublicKey(t, good()), 401, api.CodeUnauthenticated},
		{"unknown key", p.ForgeUnknownKey(t, jose.ES256, good()), 401, api.CodeUnauthenticated},
		{"not a JWT", "opaque-access-token", 401, api.CodeUnauthenticated},
		{"unmapped subject", carolID, 403, api.CodeForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tokens = append(tokens, tc.token)
			before := snapshot(t, h)
			r := exchange(t, h, tc.token)
			if r.status != tc.status || r.body.Error == nil || r.body.Error.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.raw, tc.status, tc.code)
			}
			if tc.status == 401 && r.body.Error.Message != "the ID token was not accepted" {
				t.Fatalf("a 401 says more than the generic reason: %q", r.body.Error.Message)
			}
			if bytes.Contains(r.raw, []byte(tc.token)) {
				t.Fatal("the answer echoes the ID token")
			}
			if after := snapshot(t, h); !bytes.Equal(before, after) {
				t.Fatal("a refused exchange changed the state")
			}
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"empty body", ``},
		{"no id_token", `{}`},
		{"id_token not a string", `{"id_token":1}`},
		{"unknown field", `{"id_token":"a.b.c","extra":1}`},
		{"id_token too long", `{"id_token":"` + strings.Repeat("a", oidc.MaxIDTokenBytes+1) + `"}`},
		{"not JSON", `id_token=x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, h)
			r := call(t, h.URL, "POST", api.PathAuthOIDC, "", []byte(tc.body), nil)
			if r.status != 400 || r.body.Error == nil || r.body.Error.Code != api.CodeInvalidArgument {
				t.Fatalf("%d %s, want 400 invalid_argument", r.status, r.raw)
			}
			if after := snapshot(t, h); !bytes.Equal(before, after) {
				t.Fatal("a bad body changed the state")
			}
		})
	}
	// The refusals are audited (coalesced), the unmapped one with its
	// verified subject; no ID token is in the audit or the logs.
	admin := h.Client(t, h.AdminToken)
	var audited []byte
	coordinatortest.WaitFor(t, 10*time.Second, "the SSO refusals in the audit", func() bool {
		al, err := admin.Audit(t.Context(), client.AuditQuery{Kinds: []string{"auth"}})
		if err != nil {
			t.Fatal(err)
		}
		var unmapped, invalid bool
		for _, ev := range al.Events {
			if ev.Route != "POST "+api.PathAuthOIDC {
				continue
			}
			unmapped = unmapped || (ev.Code == string(api.CodeForbidden) && ev.Subject == "carol" && strings.Contains(ev.Detail, p.Issuer))
			invalid = invalid || (ev.Code == string(api.CodeUnauthenticated) && ev.Subject == "")
		}
		audited, _ = json.Marshal(al)
		return unmapped && invalid
	})
	if leaked := jwtsIn(audited, tokens); len(leaked) > 0 {
		t.Fatalf("the audit holds %d ID tokens", len(leaked))
	}
	if leaked := jwtsIn(f.logs.Bytes(), tokens); len(leaked) > 0 {
		t.Fatalf("the logs hold %d ID tokens", len(leaked))
	}
}

// TestSSOKeyRotationThroughCoordinator: the provider rotates its key and
// withdraws the old one; the coordinator, holding the old key set,
// accepts a token of the new key at once.
func TestSSOKeyRotationThroughCoordinator(t *testing.T) {
	f := newSSOFixture(t, nil)
	mustExchange(t, f.h, f.p.IDToken(t, "alice"))
	f.p.Rotate(t, jose.ES256, false)
	if got := mustExchange(t, f.h, f.p.IDToken(t, "alice")); got.Team != "ml" {
		t.Fatalf("after rotation: %+v", got)
	}
}

// TestSSONotConfigured: without --oidc-* the route is 404 not_found.
func TestSSONotConfigured(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	r := exchange(t, h, "a.b.c")
	if r.status != 404 || r.body.Error == nil || r.body.Error.Code != api.CodeNotFound {
		t.Fatalf("%d %s, want 404 not_found", r.status, r.raw)
	}
}

// TestSSORateLimitedBySource: the exchange shares the per-source limit
// of registration and enrollment.
func TestSSORateLimitedBySource(t *testing.T) {
	f := newSSOFixture(t, func(c *coordinator.Config) {
		c.RateLimits.RegisterRate, c.RateLimits.RegisterBurst = 0.001, 2
		c.RateLimitExemptCIDRs = []string{"none"}
	})
	for i := range 2 {
		if r := exchange(t, f.h, "a.b.c"); r.status != 401 {
			t.Fatalf("call %d: %d %s", i, r.status, r.raw)
		}
	}
	r := exchange(t, f.h, "a.b.c")
	if r.status != 429 || r.body.Error == nil || r.body.Error.Code != api.CodeRateLimited || r.header.Get("Retry-After") == "" {
		t.Fatalf("third call: %d %s, want 429 with Retry-After", r.status, r.raw)
	}
}

// TestSSOConfigRefusedAtStart: a bad single sign-on configuration stops
// the coordinator from starting, with the reason.
func TestSSOConfigRefusedAtStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  oidc.Config
		want string
	}{
		{"remote http issuer", oidc.Config{Issuer: "http://idp.example", Audience: "a", Mappings: []oidc.Mapping{{Value: "g", Team: "t", Roles: []string{"read"}}}}, "loopback"},
		{"unknown role", oidc.Config{Issuer: "https://idp.example", Audience: "a", Mappings: []oidc.Mapping{{Value: "g", Team: "t", Roles: []string{"owner"}}}}, "unknown role"},
		{"no audience", oidc.Config{Issuer: "https://idp.example", Mappings: []oidc.Mapping{{Value: "g", Team: "t", Roles: []string{"read"}}}}, "go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := coordinator.New(coordinator.Config{
				DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", RaftAddr: "127.0.0.1:0", OIDC: tc.cfg,
			})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// TestSSOExchangeAtEveryNode: on a three-node cluster every coordinator
// answers the exchange (a follower forwards it to the leader), and each
// minted token is replicated: it reads at every node.
func TestSSOExchangeAtEveryNode(t *testing.T) {
	p := oidctest.Start(t, jose.ES256)
	p.SetGroups("alice", "ml")
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		cfg.OIDC = oidc.Config{Issuer: p.Issuer, Audience: oidctest.ClientID, Mappings: []oidc.Mapping{{Value: "ml", Team: api.DefaultTeam, Roles: []string{"submit"}}}}
	}})
	c.WaitLeader(20 * time.Second)
	for _, n := range c.Nodes {
		body, _ := json.Marshal(api.OIDCExchangeRequest{IDToken: p.IDToken(t, "alice")})
		r := call(t, n.URL, "POST", api.PathAuthOIDC, "", body, nil)
		var out api.OIDCExchangeResponse
		if r.status != 201 || json.Unmarshal(r.raw, &out) != nil || out.Team != api.DefaultTeam {
			t.Fatalf("exchange at %s: %d %s", n.ID, r.status, r.raw)
		}
		for _, m := range c.Nodes {
			coordinatortest.WaitFor(t, 10*time.Second, "the SSO token to read at "+m.ID, func() bool {
				return call(t, m.URL, "GET", "/v1/jobs", out.Token, nil, nil).status == 200
			})
		}
	}
}

// TestSSOTokenActsWithinItsTeam: the minted token belongs to the mapped
// team: it lists that team's jobs only and another team's job is not
// found. A mapping to a team that does not exist is refused with 403 and
// mints nothing.
func TestSSOTokenActsWithinItsTeam(t *testing.T) {
	f := newSSOFixture(t, func(c *coordinator.Config) {
		c.OIDC.Mappings = append(c.OIDC.Mappings, oidc.Mapping{Value: "finance", Team: "finance", Roles: []string{"read"}})
	})
	h := f.h
	admin := h.Client(t, h.AdminToken)
	other, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	alice := mustExchange(t, h, f.p.IDToken(t, "alice"))
	tokens, err := admin.Tokens(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range tokens {
		if strings.HasPrefix(tok.Name, "sso-alice-") && tok.Team != "ml" {
			t.Errorf("alice's SSO token is in team %q, want ml", tok.Team)
		}
	}
	wantCode(t, "alice reads default's job", call(t, h.URL, "GET", "/v1/jobs/"+other.ID, alice.Token, nil, nil), 404, api.CodeNotFound)
	var page api.JobList
	decodeOK(t, call(t, h.URL, "GET", "/v1/jobs", alice.Token, nil, nil), 200, &page)
	if len(page.Jobs) != 0 {
		t.Errorf("alice lists another team's jobs: %+v", page.Jobs)
	}
	before := len(tokens)
	wantCode(t, "carol, mapped to a team that does not exist", exchange(t, h, f.p.IDToken(t, "carol")), 403, api.CodeForbidden)
	if after, _ := admin.Tokens(t.Context()); len(after) != before {
		t.Errorf("a refused exchange minted a token: %d tokens, were %d", len(after), before)
	}
}

// jwtsIn lists the JWTs found in b, whole or by their signature (a
// string too short to be a credential is not looked for).
func jwtsIn(b []byte, jwts []string) []string {
	var found []string
	for i, j := range jwts {
		if len(j) < 32 {
			continue
		}
		sig := j[strings.LastIndex(j, ".")+1:]
		if bytes.Contains(b, []byte(j)) || (len(sig) >= 32 && bytes.Contains(b, []byte(sig))) {
			found = append(found, fmt.Sprintf("ID token %d", i))
		}
	}
	return found
}
