package oidclogin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// CallbackPath is the loopback redirect's path; the provider's client
// registration names http://127.0.0.1/callback (any port).
const CallbackPath = "/callback"

// callback is what the redirect brought back.
type callback struct {
	code string
	err  error
}

// PKCE runs the authorization code grant with PKCE (S256) on a loopback
// redirect: it listens on 127.0.0.1 at a port the system picks, hands
// the authorization URL to show (to print or open in a browser), waits
// for the provider to redirect back with a code bound to a random
// state, and redeems it with the code verifier.
func PKCE(ctx context.Context, c Config, show func(authURL string)) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("oidclogin: loopback listener: %w", err)
	}
	defer ln.Close()
	redirect := fmt.Sprintf("http://%s%s", ln.Addr().String(), CallbackPath)
	ctx, oc, err := c.oauthConfig(ctx, redirect)
	if err != nil {
		return "", err
	}
	state, err := randomString()
	if err != nil {
		return "", err
	}
	verifier := oauth2.GenerateVerifier()

	got := make(chan callback, 1)
	srv := &http.Server{Handler: callbackHandler(state, got), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	// Shut down gracefully: the handler hands the code over before it
	// answers the browser, and a Close right after the exchange cut that
	// answer off (the browser saw the connection end; a test caught it).
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()

	show(oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	var cb callback
	select {
	case cb = <-got:
	case <-ctx.Done():
		return "", fmt.Errorf("oidclogin: waiting for the browser: %w", ctx.Err())
	}
	if cb.err != nil {
		return "", cb.err
	}
	tok, err := oc.Exchange(ctx, cb.code, oauth2.VerifierOption(verifier))
	if err != nil {
		return "", fmt.Errorf("oidclogin: code exchange: %w", err)
	}
	return idToken(tok)
}

// callbackHandler takes the first redirect whose state matches and
// ignores any other request (a stray browser tab, a prober).
func callbackHandler(state string, got chan<- callback) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+CallbackPath, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(state)) != 1 {
			http.Error(w, "unexpected state", http.StatusBadRequest)
			return
		}
		var cb callback
		switch {
		case q.Get("error") != "":
			cb.err = fmt.Errorf("oidclogin: the provider refused: %s", sanitize(q.Get("error")))
		case q.Get("code") == "":
			cb.err = errors.New("oidclogin: the redirect carries no code")
		default:
			cb.code = q.Get("code")
		}
		select {
		case got <- cb:
			_, _ = w.Write([]byte("GpuLayer: you are logged in; you may close this window.\n"))
		default:
			http.Error(w, "login already completed", http.StatusConflict)
		}
	})
	return mux
}

// sanitize keeps a provider's error word printable and short.
func sanitize(s string) string {
	out := make([]rune, 0, 64)
	for _, r := range s {
		if len(out) == 64 {
			break
		}
		if r >= 0x20 && r < 0x7f {
			out = append(out, r)
		}
	}
	return string(out)
}

func randomString() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
