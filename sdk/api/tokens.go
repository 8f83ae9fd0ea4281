package api

// Credential kinds as the token routes name them.
const (
	TokenKindClient   = "client"
	TokenKindJoin     = "join"
	TokenKindInstance = "instance"
	TokenKindWorker   = "worker"
)

// Client roles. Admin implies submit, and submit implies read.
const (
	RoleAdmin  = "admin"
	RoleSubmit = "submit"
	RoleRead   = "read"
)

// CreateTokenRequest is the body of POST /v1/tokens. Roles apply to client
// tokens (default: read); MaxUses, RequiresApproval, Groups and Labels to
// join tokens. MaxUses 0 means unlimited; 1 is a one-time join code.
type CreateTokenRequest struct {
	Kind             string            `json:"kind"`
	Name             string            `json:"name"`
	Roles            []string          `json:"roles,omitempty"`
	ExpiresInSeconds int64             `json:"expires_in_seconds,omitempty"`
	MaxUses          int               `json:"max_uses,omitempty"`
	RequiresApproval bool              `json:"requires_approval,omitempty"`
	Groups           []string          `json:"groups,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	// GPUModels, on a join token, pins the GPU models (names as NVML
	// reports them, any case) its workers may have: a worker reporting
	// another model is refused at registration, and one that reports it
	// later has that GPU kept out of service.
	GPUModels []string `json:"gpu_models,omitempty"`
	// Team, on a client token, is the team it acts within (absent:
	// default): its submit and read roles reach that team's jobs only.
	Team string `json:"team,omitempty"`
}

// MaxTokenGPUModels bounds CreateTokenRequest.GPUModels.
const MaxTokenGPUModels = 16

// CreateInstanceTokenRequest is the body of POST /v1/instance-tokens.
type CreateInstanceTokenRequest struct {
	InstanceID       string `json:"instance_id"`
	Name             string `json:"name,omitempty"`
	ExpiresInSeconds int64  `json:"expires_in_seconds,omitempty"`
}

// TokenInfo describes a client, join or instance token: never its secret
// or the secret's hash.
type TokenInfo struct {
	ID               string            `json:"id"`
	Kind             string            `json:"kind"`
	Name             string            `json:"name"`
	Roles            []string          `json:"roles,omitempty"`
	CreatedAt        string            `json:"created_at"`
	CreatedBy        string            `json:"created_by,omitempty"`
	ExpiresAt        string            `json:"expires_at,omitempty"`
	MaxUses          int               `json:"max_uses,omitempty"`
	Uses             int               `json:"uses"`
	LastUsedAt       string            `json:"last_used_at,omitempty"`
	RequiresApproval bool              `json:"requires_approval,omitempty"`
	Groups           []string          `json:"groups,omitempty"`
	Labels           map[string]string `json:"labels,omitempty"`
	GPUModels        []string          `json:"gpu_models,omitempty"`
	InstanceID       string            `json:"instance_id,omitempty"`
	Team             string            `json:"team,omitempty"`
	Revoked          bool              `json:"revoked"`
	RevokedAt        string            `json:"revoked_at,omitempty"`
	RevokedBy        string            `json:"revoked_by,omitempty"`
}

// CreateTokenResponse answers POST /v1/tokens and POST
// /v1/instance-tokens: the record and the bearer token, shown only here.
type CreateTokenResponse struct {
	TokenInfo
	Token string `json:"token"`
}

// TokenResponse wraps one token record (GET /v1/tokens/{id}, DELETE).
type TokenResponse struct {
	Token TokenInfo `json:"token"`
}

// TokenList answers GET /v1/tokens.
type TokenList struct {
	Tokens []TokenInfo `json:"tokens"`
}
