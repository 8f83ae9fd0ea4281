package oidctest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/oidclogin"
)

// Browse plays the person's browser: a GET of u that follows every
// redirect (the loopback one included); the outcome arrives on the
// returned channel.
func Browse(u string) <-chan error {
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Get(u)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: %s: %s", u, resp.Status, body)
			}
		}
		errc <- err
	}()
	return errc
}

// ApproveDevice plays the person approving a device prompt.
func ApproveDevice(d oidclogin.DevicePrompt) <-chan error {
	return Browse(d.VerificationURI + "?user_code=" + url.QueryEscape(d.UserCode))
}

// IDToken logs user in through the provider's authorization code flow
// with PKCE, as the CLI would, and returns the ID token it issued.
func (p *Provider) IDToken(t testing.TB, user string) string {
	t.Helper()
	p.LoginAs(user)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var browsed <-chan error
	raw, err := oidclogin.PKCE(ctx, oidclogin.Config{Issuer: p.Issuer, ClientID: ClientID}, func(u string) { browsed = Browse(u) })
	if err != nil {
		t.Fatalf("oidctest: login as %s: %v", user, err)
	}
	if err := <-browsed; err != nil {
		t.Fatalf("oidctest: browser: %v", err)
	}
	return raw
}
