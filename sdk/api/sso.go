package api

// PathAuthOIDC exchanges an OpenID Connect ID token for a client token
// (no credential; 404 not_found where single sign-on is not configured).
const PathAuthOIDC = "/v1/auth/oidc"

// OIDCExchangeRequest is the body of POST /v1/auth/oidc.
type OIDCExchangeRequest struct {
	IDToken string `json:"id_token"`
}

// OIDCExchangeResponse is its 201 answer: a client token shown once,
// for the team and roles the subject's claim maps to. Until teams are
// replicated the token itself is cluster-scoped: Team says which team the
// mapping chose.
type OIDCExchangeResponse struct {
	Token     string   `json:"token"`
	ExpiresAt string   `json:"expires_at"`
	Team      string   `json:"team"`
	Roles     []string `json:"roles"`
	Subject   string   `json:"subject"`
}

// PathAuthSelf answers the calling client token's own record (any
// client role): GET, {token: TokenInfo}.
const PathAuthSelf = "/v1/auth/self"
