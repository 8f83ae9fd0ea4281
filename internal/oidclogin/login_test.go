package oidclogin_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/gpulayer/gpulayer/internal/oidclogin"
	"github.com/gpulayer/gpulayer/internal/oidctest"
)

// claimsOf decodes an ID token's payload (unverified: the coordinator
// verifies; here we only check what the provider issued).
func claimsOf(t *testing.T, raw string) map[string]any {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("ID token has %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoginPKCEGetsIDToken(t *testing.T) {
	p := oidctest.Start(t, jose.RS256)
	p.SetGroups("alice", "ml")
	p.LoginAs("alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errc <-chan error
	var shown string
	raw, err := oidclogin.PKCE(ctx, oidclogin.Config{Issuer: p.Issuer, ClientID: oidctest.ClientID}, func(u string) {
		shown = u
		errc = oidctest.Browse(u)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("browser: %v", err)
	}
	q, _ := url.Parse(shown)
	if q.Query().Get("code_challenge_method") != "S256" || q.Query().Get("code_challenge") == "" {
		t.Fatalf("authorization URL carries no S256 challenge: %s", shown)
	}
	if r := q.Query().Get("redirect_uri"); !strings.HasPrefix(r, "http://127.0.0.1:") {
		t.Fatalf("redirect %q is not a loopback one", r)
	}
	c := claimsOf(t, raw)
	if c["sub"] != "alice" || c["iss"] != p.Issuer || c["aud"] == nil {
		t.Fatalf("claims %v", c)
	}
	if g, _ := c["groups"].([]any); len(g) != 1 || g[0] != "ml" {
		t.Fatalf("groups %v", c["groups"])
	}
}

func TestLoginDeviceGetsIDToken(t *testing.T) {
	p := oidctest.Start(t, jose.ES256)
	p.SetGroups("bob", "ops")
	p.LoginAs("bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errc <-chan error
	raw, err := oidclogin.Device(ctx, oidclogin.Config{Issuer: p.Issuer, ClientID: oidctest.ClientID}, func(d oidclogin.DevicePrompt) {
		if d.UserCode == "" || d.VerificationURI == "" {
			t.Errorf("device prompt %+v lacks a code or a URI", d)
		}
		errc = oidctest.ApproveDevice(d)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("browser: %v", err)
	}
	if c := claimsOf(t, raw); c["sub"] != "bob" {
		t.Fatalf("claims %v", c)
	}
}

func TestLoginPKCEStrayCallbackIgnored(t *testing.T) {
	p := oidctest.Start(t, jose.RS256)
	p.LoginAs("alice")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errc <-chan error
	raw, err := oidclogin.PKCE(ctx, oidclogin.Config{Issuer: p.Issuer, ClientID: oidctest.ClientID}, func(u string) {
		q, _ := url.Parse(u)
		redirect := q.Query().Get("redirect_uri")
		// A forged redirect with the wrong state is refused and does not
		// end the wait.
		resp, err := http.Get(redirect + "?code=forged&state=wrong")
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("stray callback: %v %v", err, resp)
		}
		if resp != nil {
			resp.Body.Close()
		}
		errc = oidctest.Browse(u)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if c := claimsOf(t, raw); c["sub"] != "alice" {
		t.Fatalf("claims %v", c)
	}
}
