package command

import "time"

// CreateToken stores a client, join or instance token minted by the
// leader (its hash only). The state machine refuses an id collision, a
// second live client token with the same name, and join-token groups that
// do not exist.
type CreateToken struct {
	Credential CredentialRecord `json:"credential"`
	Source     string           `json:"source,omitempty"`
	Now        time.Time        `json:"now"`
}

// RevokeToken revokes a client, join or instance token. Revoking a revoked
// token changes nothing.
type RevokeToken struct {
	TokenID string    `json:"token_id"`
	By      string    `json:"by"`
	Source  string    `json:"source,omitempty"`
	Now     time.Time `json:"now"`
}

// ApproveWorker moves a pending worker to ready.
type ApproveWorker struct {
	WorkerID string    `json:"worker_id"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (CreateToken) Type() Type   { return TypeCreateToken }
func (RevokeToken) Type() Type   { return TypeRevokeToken }
func (ApproveWorker) Type() Type { return TypeApproveWorker }
