package oidctest

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ClientID is the public client the provider knows: a native
// application with a loopback redirect (any port, RFC 8252) at
// RedirectPath, allowed the code and device grants.
const (
	ClientID     = "gpulayer-cli"
	RedirectPath = "/callback"
	Password     = "password"
)

// Provider is a running OpenID Provider.
type Provider struct {
	// Issuer is its issuer URL (http on 127.0.0.1).
	Issuer string
	srv    *httptest.Server
	op     *op.Provider
	st     *store

	loginAs chan string // who the login and device pages log in
}

// Start runs a provider until the test ends. Its first signing key is
// alg's (RS256 or ES256).
func Start(t testing.TB, alg jose.SignatureAlgorithm) *Provider {
	t.Helper()
	p := &Provider{loginAs: make(chan string, 1)}
	mux := http.NewServeMux()
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.Issuer = p.srv.URL

	k, err := newKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*storage.Client{
		ClientID: storage.NativeClient(ClientID, "http://127.0.0.1"+RedirectPath),
	}
	p.st = &store{
		Storage: storage.NewStorageWithClients(newUsers(), clients),
		signing: k, published: []*key{k}, groups: map[string][]string{},
	}
	cfg := &op.Config{
		CryptoKey:      sha256.Sum256([]byte(t.Name())),
		CodeMethodS256: true,
		DeviceAuthorization: op.DeviceAuthorizationConfig{
			Lifetime:     5 * time.Minute,
			PollInterval: time.Second,
			UserFormPath: "/device",
			UserCode:     op.UserCodeBase20,
		},
	}
	p.op, err = op.NewProvider(cfg, p.st, op.StaticIssuer(p.Issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("/login/username", p.login)
	mux.HandleFunc("/device", p.device)
	mux.Handle("/", p.op)
	return p
}

// SetGroups sets the groups claim of a user's next ID tokens (nil: no
// claim).
func (p *Provider) SetGroups(user string, groups ...string) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.groups[user] = slices.Clone(groups)
}

// Rotate makes a new key of alg the signing key. With keepOld the old
// keys stay published (a graceful rotation); without, only the new one
// is.
func (p *Provider) Rotate(t testing.TB, alg jose.SignatureAlgorithm, keepOld bool) {
	t.Helper()
	k, err := newKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	p.st.signing = k
	if keepOld {
		p.st.published = append(p.st.published, k)
	} else {
		p.st.published = []*key{k}
	}
}

// LoginAs arms the login and device pages: the next one to be visited
// logs in user.
func (p *Provider) LoginAs(user string) {
	select {
	case <-p.loginAs:
	default:
	}
	p.loginAs <- user
}

func (p *Provider) nextUser(w http.ResponseWriter) (string, bool) {
	select {
	case u := <-p.loginAs:
		return u, true
	default:
		http.Error(w, "no user is logging in", http.StatusForbidden)
		return "", false
	}
}

// login is the provider's login page: it logs in the armed user and
// sends the browser on to the authorization callback.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	user, ok := p.nextUser(w)
	if !ok {
		return
	}
	id := r.URL.Query().Get("authRequestID")
	if err := p.st.CheckUsernamePassword(user, Password, id); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	ctx := op.ContextWithIssuer(r.Context(), p.Issuer)
	http.Redirect(w, r, op.AuthCallbackURL(p.op)(ctx, id), http.StatusFound)
}

// device is the verification page: it approves user_code for the armed
// user.
func (p *Provider) device(w http.ResponseWriter, r *http.Request) {
	user, ok := p.nextUser(w)
	if !ok {
		return
	}
	if err := p.st.CompleteDeviceAuthorization(r.Context(), r.URL.Query().Get("user_code"), user); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = w.Write([]byte("device approved\n"))
}
