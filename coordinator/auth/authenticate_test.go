package auth

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// fakeCreds is the replicated state as authentication reads it.
type fakeCreds struct {
	creds    map[string]creds.Credential
	workers  map[string]state.WorkerAuth
	networks map[string]netip.Prefix
}

func (f fakeCreds) Credential(id string) (creds.Credential, bool) { c, ok := f.creds[id]; return c, ok }
func (f fakeCreds) WorkerAuthInfo(id string) (state.WorkerAuth, bool) {
	w, ok := f.workers[id]
	return w, ok
}
func (f fakeCreds) ContainsSource(key string, ip netip.Addr) bool {
	p, ok := f.networks[key]
	return ok && p.Contains(ip)
}

func mint(t *testing.T, f fakeCreds, prefix string, rec command.CredentialRecord) (string, *creds.Credential) {
	t.Helper()
	m, err := Mint(prefix)
	if err != nil {
		t.Fatal(err)
	}
	rec.ID, rec.Hash = m.Token.ID, m.Token.Hash()
	c := creds.Credential{CredentialRecord: rec}
	f.creds[rec.ID] = c
	return m.Token.String(), &c
}

func TestAuthenticateDecides(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	f := fakeCreds{creds: map[string]creds.Credential{}, workers: map[string]state.WorkerAuth{}, networks: map[string]netip.Prefix{"lab": netip.MustParsePrefix("10.0.0.0/8")}}
	client, _ := mint(t, f, "glc", command.CredentialRecord{Kind: "client", Name: "alice", Roles: []string{RoleSubmit}})
	expired, _ := mint(t, f, "glc", command.CredentialRecord{Kind: "client", Name: "old", ExpiresAt: now.Add(-time.Minute)})
	join, _ := mint(t, f, "glj", command.CredentialRecord{Kind: "join", Name: "j", MaxUses: 1})
	used := f.creds[strings.Split(join, "_")[1]]
	used.Uses = 1
	f.creds[used.ID] = used
	revokedTok, _ := mint(t, f, "glc", command.CredentialRecord{Kind: "client", Name: "gone"})
	rv := f.creds[strings.Split(revokedTok, "_")[1]]
	rv.Revoked = true
	f.creds[rv.ID] = rv
	worker := func(id, status, cluster string) string {
		tok, c := mint(t, f, "glw", command.CredentialRecord{Kind: "worker", WorkerID: id})
		f.workers[id] = state.WorkerAuth{ID: id, Status: status, CredentialID: c.ID, ClusterKey: cluster}
		return tok
	}
	ready, pending, revoked, lab := worker("w1", state.WorkerReady, ""), worker("w2", state.WorkerPending, ""), worker("w3", state.WorkerRevoked, ""), worker("w4", state.WorkerReady, "lab")
	replaced, _ := mint(t, f, "glw", command.CredentialRecord{Kind: "worker", WorkerID: "w1"}) // w1 holds another credential
	orphan, _ := mint(t, f, "glw", command.CredentialRecord{Kind: "worker", WorkerID: "nobody"})
	asWorker := strings.Replace(client, "glc_", "glw_", 1) // a client's id and secret under another kind
	wrongSecret := client[:len(client)-4] + "0000"

	inside, outside := netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("192.0.2.7")
	for _, tc := range []struct {
		name   string
		header []string
		from   netip.Addr
		reason Reason // "" when accepted
		want   Principal
		is     error
	}{
		{name: "client", header: []string{"Bearer " + client}, want: Principal{Kind: KindClient, Name: "alice"}},
		{name: "scheme in any case, spaces", header: []string{"bEARER   " + client}, want: Principal{Kind: KindClient, Name: "alice"}},
		{name: "no header", header: nil, reason: ReasonMissing},
		{name: "empty header", header: []string{""}, reason: ReasonMissing},
		{name: "two headers", header: []string{"Bearer " + client, "Bearer " + client}, reason: ReasonMalformed},
		{name: "basic scheme", header: []string{"Basic " + client}, reason: ReasonMalformed},
		{name: "not a token", header: []string{"Bearer hello"}, reason: ReasonMalformed},
		{name: "wrong secret", header: []string{"Bearer " + wrongSecret}, reason: ReasonUnknown},
		{name: "another kind's prefix", header: []string{"Bearer " + asWorker}, reason: ReasonUnknown},
		{name: "expired", header: []string{"Bearer " + expired}, reason: ReasonExpired},
		{name: "used up", header: []string{"Bearer " + join}, reason: ReasonUsedUp},
		{name: "revoked token", header: []string{"Bearer " + revokedTok}, reason: ReasonRevoked},
		{name: "worker", header: []string{"Bearer " + ready}, want: Principal{Kind: KindWorker, WorkerID: "w1"}},
		{name: "pending worker", header: []string{"Bearer " + pending}, want: Principal{Kind: KindWorker, WorkerID: "w2"}, is: state.ErrWorkerPending},
		{name: "revoked worker", header: []string{"Bearer " + revoked}, reason: ReasonRevoked, is: state.ErrWorkerRevoked},
		{name: "replaced worker credential", header: []string{"Bearer " + replaced}, reason: ReasonReplaced},
		{name: "worker credential of no worker", header: []string{"Bearer " + orphan}, reason: ReasonUnknown},
		{name: "enrolled worker inside its networks", header: []string{"Bearer " + lab}, from: inside, want: Principal{Kind: KindWorker, WorkerID: "w4"}},
		{name: "enrolled worker outside its networks", header: []string{"Bearer " + lab}, from: outside, reason: ReasonNetwork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Authenticator{Creds: f, RequireIPBinding: true}
			p, err := a.Authenticate(tc.header, tc.from, now)
			if tc.reason == "" {
				if (tc.is == nil && err != nil) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Fatalf("error %v, want %v", err, tc.is)
				}
				if p.Kind != tc.want.Kind || p.Name != tc.want.Name || p.WorkerID != tc.want.WorkerID || p.CredentialID == "" {
					t.Fatalf("principal %+v, want %+v", p, tc.want)
				}
				return
			}
			if got := ReasonOf(err); got != tc.reason {
				t.Fatalf("refused for %q (%v), want %q", got, err, tc.reason)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("%v does not stand for %v", err, tc.is)
			}
			for _, h := range tc.header {
				if tok, err2 := Parse(strings.TrimSpace(h[strings.Index(h, " ")+1:])); err2 == nil && strings.Contains(err.Error(), tok.Secret) {
					t.Fatalf("the refusal %q quotes the secret", err)
				}
			}
			if len(p.Roles) != 0 || p.Name != "" {
				t.Fatalf("a refused request acts as %+v", p)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	submit := Principal{Kind: KindClient, Name: "a", Roles: []string{RoleSubmit}}
	for _, tc := range []struct {
		name   string
		p      Principal
		rule   Rule
		reason Reason
	}{
		{"role implied", submit, Rule{Kind: KindClient, Role: RoleRead}, ""},
		{"role held", submit, Rule{Kind: KindClient, Role: RoleSubmit}, ""},
		{"role missing", submit, Rule{Kind: KindClient, Role: RoleAdmin}, ReasonWrongRole},
		{"wrong kind", Principal{Kind: KindWorker}, Rule{Kind: KindClient, Role: RoleRead}, ReasonWrongKind},
		{"the other kind a rule takes", Principal{Kind: KindWorker}, Rule{Kind: KindClient, Also: KindWorker, Role: RoleRead}, ""},
		{"no credential", Principal{}, Rule{Kind: KindJoin}, ReasonWrongKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Authorize(tc.p, tc.rule)
			if tc.reason == "" && err != nil || tc.reason != "" && ReasonOf(err) != tc.reason {
				t.Fatalf("Authorize: %v, want %q", err, tc.reason)
			}
		})
	}
}
