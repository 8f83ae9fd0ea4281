package oidctest

import (
	"context"
	"slices"
	"sync"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// store is the example storage with the test's keys, groups and clients.
type store struct {
	*storage.Storage

	mu        sync.Mutex
	signing   *key   // signs new tokens
	published []*key // the key set, signing key included
	groups    map[string][]string
}

var _ op.Storage = (*store)(nil)
var _ op.DeviceAuthorizationStorage = (*store)(nil)

func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signing, nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256, jose.ES256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.published))
	for _, k := range s.published {
		out = append(out, publicKey{k})
	}
	return out, nil
}

// SetUserinfoFromRequest adds the user's groups to the ID token.
func (s *store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	s.mu.Lock()
	g := slices.Clone(s.groups[req.GetSubject()])
	s.mu.Unlock()
	if g != nil {
		info.AppendClaims("groups", g)
	}
	return nil
}

// GetClientByClientID answers the test's public CLI client, which may use
// both the authorization code (with PKCE, on a loopback redirect) and the
// device flow.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	if id == ClientID {
		return cliClient{c}, nil
	}
	return c, nil
}

// cliClient is a native client that may also use the device grant.
type cliClient struct{ op.Client }

func (c cliClient) GrantTypes() []oidc.GrantType {
	return append(slices.Clone(c.Client.GrantTypes()), oidc.GrantTypeDeviceCode)
}

// users is the provider's user store: alice, bob and carol, each with
// the password "password".
type users map[string]*storage.User

func (u users) GetUserByID(id string) *storage.User { return u[id] }
func (u users) GetUserByUsername(name string) *storage.User {
	return u[name]
}
func (u users) ExampleClientID() string { return storage.ServiceUserID }

func newUsers() users {
	u := users{}
	for _, n := range []string{"alice", "bob", "carol"} {
		u[n] = &storage.User{ID: n, Username: n, Password: Password, Email: n + "@example.test", EmailVerified: true}
	}
	return u
}
