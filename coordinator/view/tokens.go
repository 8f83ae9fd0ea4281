package view

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Token renders a client, join or instance token: never its hash.
func Token(c creds.Credential) api.TokenInfo {
	labels := c.Labels
	if len(labels) == 0 {
		labels = nil
	}
	return api.TokenInfo{
		ID:               c.ID,
		Kind:             c.Kind,
		Name:             c.Name,
		Roles:            c.Roles,
		CreatedAt:        api.FormatTime(c.CreatedAt),
		CreatedBy:        c.CreatedBy,
		ExpiresAt:        api.FormatTime(c.ExpiresAt),
		MaxUses:          c.MaxUses,
		Uses:             c.Uses,
		LastUsedAt:       api.FormatTime(c.LastUsedAt),
		RequiresApproval: c.RequiresApproval,
		Groups:           c.Groups,
		Labels:           labels,
		GPUModels:        c.GPUModels,
		InstanceID:       c.InstanceID,
		Team:             tokenTeam(c),
		Revoked:          c.Revoked,
		RevokedAt:        api.FormatTime(c.RevokedAt),
		RevokedBy:        c.RevokedBy,
	}
}

// Tokens renders a list of tokens, in its order.
func Tokens(cs []creds.Credential) []api.TokenInfo {
	return each(cs, Token)
}

// tokenTeam names a client token's team (default for one from before
// teams); other kinds belong to none.
func tokenTeam(c creds.Credential) string {
	if c.Kind != api.TokenKindClient {
		return ""
	}
	return command.TeamOf(c.Team)
}
