// Package oidc turns an OpenID Connect ID token into the team and roles a
// GpuLayer client token is minted for (single sign-on).
//
// Verification is github.com/coreos/go-oidc/v3's: the issuer's discovery
// document names its key set, which is fetched again whenever a token
// names a key id it does not hold (so a provider's key rotation needs no
// restart); the signature must be RS256 or ES256, and the issuer,
// audience and expiry must match. What passes is mapped by a pure
// function (Map) from the configured claim's values to one team and its
// roles. Decisions return a *Refusal with a Reason, never the token.
package oidc
