package coordinator

import (
	"context"

	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
)

// newSSO builds the ID token verifier when single sign-on is configured
// (nil otherwise: POST /v1/auth/oidc then answers 404). The provider is
// not contacted here: discovery happens on the first exchange, so a
// coordinator starts while its identity provider is down.
func newSSO(cfg Config) (httpapi.SSO, error) {
	if !cfg.OIDC.Enabled() {
		return nil, nil
	}
	v, err := oidc.New(context.Background(), cfg.OIDC, oidc.Options{
		Now:    cfg.Clock.Now,
		Logger: cfg.Logger.With("component", "oidc"),
	})
	if err != nil {
		return nil, err
	}
	cfg.Logger.Info("single sign-on enabled", "issuer", cfg.OIDC.Issuer, "audience", cfg.OIDC.Audience, "claim", cfg.OIDC.Claim, "mappings", len(cfg.OIDC.Mappings))
	return v, nil
}
