package state

import (
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
)

// The credential commands: the room (package creds) keeps the table and
// its rules; the state checks a client token's team and a join token's
// groups, and audits each change.

func (s *Store) importBootstrap(c command.ImportBootstrap) (bool, error) {
	if c.Generation <= s.bootstrapGeneration {
		return false, nil
	}
	revoked := 0
	if s.bootstrapGeneration > 0 {
		// Rotation: every client, join and instance token is replaced.
		revoked = s.credentials.Rotate(c.Now)
	}
	ids := make([]string, 0, len(c.Credentials))
	for _, rec := range c.Credentials {
		s.credentials.Put(rec)
		ids = append(ids, rec.ID)
	}
	kind, detail := "credentials.imported", fmt.Sprintf("generation %d: %d credentials installed", c.Generation, len(ids))
	if s.bootstrapGeneration > 0 {
		kind = "credentials.rotated"
		detail = fmt.Sprintf("generation %d: %d client, join and instance tokens revoked, %d installed", c.Generation, revoked, len(ids))
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: "init", Subject: strings.Join(ids, ","), Detail: detail})
	s.bootstrapGeneration = c.Generation
	return true, nil
}

// BootstrapGeneration is the generation of the last imported init file.
func (s *Store) BootstrapGeneration() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bootstrapGeneration
}

// Credential returns a copy of the credential with id, if it exists.
func (s *Store) Credential(id string) (creds.Credential, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.credentials.Get(id)
	if !ok {
		return creds.Credential{}, false
	}
	return *c, true
}

func (s *Store) createToken(c command.CreateToken) (creds.Credential, error) {
	rec := c.Credential
	if rec.ID == "" || rec.Hash == "" || !creds.Rotated(rec.Kind) {
		return creds.Credential{}, fmt.Errorf("%w: token without id, hash or a client/join/instance kind", ErrInvalid)
	}
	if s.credentials.Has(rec.ID) {
		return creds.Credential{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	if rec.Kind != creds.KindClient && rec.Team != "" {
		return creds.Credential{}, fmt.Errorf("%w: only a client token belongs to a team", ErrInvalid)
	}
	if rec.Kind == creds.KindClient {
		if _, ok := s.teams.Get(command.TeamOf(rec.Team)); !ok {
			return creds.Credential{}, fmt.Errorf("team %s: %w", rec.Team, ErrNotFound)
		}
		if id, taken := s.credentials.LiveClientNamed(rec.Name, c.Now); taken {
			return creds.Credential{}, fmt.Errorf("client token %s is already named %q; revoke it first or choose another name: %w", id, rec.Name, ErrConflict)
		}
	}
	for _, g := range rec.Groups {
		if !s.groups.Has(g) {
			return creds.Credential{}, fmt.Errorf("group %s: %w", g, ErrNotFound)
		}
	}
	cred := s.credentials.Put(rec)
	detail := "kind " + rec.Kind + ", name " + rec.Name
	switch rec.Kind {
	case creds.KindClient:
		detail += ", roles " + strings.Join(rec.Roles, ",") + ", team " + command.TeamOf(rec.Team)
	case creds.KindJoin:
		detail += fmt.Sprintf(", max_uses %d, requires_approval %t", rec.MaxUses, rec.RequiresApproval)
		if len(rec.Groups) > 0 {
			detail += ", groups " + strings.Join(rec.Groups, ",")
		}
	case creds.KindInstance:
		detail += ", instance " + rec.InstanceID
	}
	if !rec.ExpiresAt.IsZero() {
		detail += ", expires " + rec.ExpiresAt.UTC().Format(timeFormat)
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "token.created", Actor: rec.CreatedBy, CredentialID: rec.ID, CredentialKind: rec.Kind, Subject: rec.ID, Team: clientTeam(rec), Source: c.Source, Detail: detail})
	return cred.Clone(), nil
}

func (s *Store) revokeToken(c command.RevokeToken) (creds.Credential, error) {
	tok, changed, err := s.credentials.RevokeToken(c.TokenID, c.By, c.Now)
	if err != nil || !changed {
		return tok, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "token.revoked", Actor: c.By, CredentialID: tok.ID, CredentialKind: tok.Kind, Subject: tok.ID, Source: c.Source, Detail: "name " + tok.Name})
	return tok, nil
}

// Tokens lists client, join and instance tokens by id (never a hash).
func (s *Store) Tokens() []creds.Credential {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.credentials.Tokens()
}

// Token returns one client, join or instance token.
func (s *Store) Token(id string) (creds.Credential, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.credentials.Token(id)
}

// clientTeam is a client token's team, and nothing for other kinds.
func clientTeam(rec command.CredentialRecord) string {
	if rec.Kind != creds.KindClient {
		return ""
	}
	return command.TeamOf(rec.Team)
}
