package state

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Credential kinds as stored (the auth package's kinds, without importing
// it).
const (
	kindClient   = "client"
	kindJoin     = "join"
	kindInstance = "instance"
	kindWorker   = "worker"
)

// enrollmentKind reports whether a kind is one of the enrollment and client
// credentials that rotation replaces (worker credentials are independent).
func rotatedKind(kind string) bool {
	return kind == kindClient || kind == kindJoin || kind == kindInstance
}

func (s *Store) importBootstrap(c command.ImportBootstrap) (bool, error) {
	if c.Generation <= s.bootstrapGeneration {
		return false, nil
	}
	revoked := 0
	if s.bootstrapGeneration > 0 {
		// Rotation: every client, join and instance token is replaced.
		// Worker credentials are independent and untouched.
		for _, id := range s.sortedCredentialIDs() {
			cr := s.credentials[id]
			if rotatedKind(cr.Kind) && !cr.Revoked {
				cr.Revoked, cr.RevokedAt, cr.RevokedBy = true, c.Now, "rotation"
				revoked++
			}
		}
	}
	ids := make([]string, 0, len(c.Credentials))
	for _, rec := range c.Credentials {
		s.credentials[rec.ID] = &Credential{CredentialRecord: rec}
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
func (s *Store) Credential(id string) (Credential, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.credentials[id]
	if !ok {
		return Credential{}, false
	}
	return *c, true
}

// Expired reports whether c has an expiry at or before now.
func (c Credential) Expired(now time.Time) bool {
	return !c.ExpiresAt.IsZero() && !now.Before(c.ExpiresAt)
}

// UsedUp reports whether a token with a use limit has no use left.
func (c Credential) UsedUp() bool { return c.MaxUses > 0 && c.Uses >= c.MaxUses }

// Check reports why a credential may not be used at now, wrapping
// ErrCredentialUnusable, or nil. The HTTP layer and the state machine use
// the same rule, so a redemption the handler let through is refused
// atomically if a concurrent one used the token up first.
func (c Credential) Check(now time.Time) error {
	switch {
	case c.Revoked:
		return fmt.Errorf("%s token %s was revoked or rotated: %w", c.Kind, c.ID, ErrCredentialUnusable)
	case c.Expired(now):
		return fmt.Errorf("%s token %s has expired: %w", c.Kind, c.ID, ErrCredentialUnusable)
	case c.UsedUp():
		return fmt.Errorf("%s token %s has been used up: %w", c.Kind, c.ID, ErrCredentialUnusable)
	}
	return nil
}

// CredentialIDs lists credential ids in order (for tests and audit).
func (s *Store) CredentialIDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedCredentialIDs()
}

func (s *Store) sortedCredentialIDs() []string {
	ids := make([]string, 0, len(s.credentials))
	for id := range s.credentials {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// liveClientNamed reports whether a usable client token is named name.
func (s *Store) liveClientNamed(name string, now time.Time) (string, bool) {
	for _, id := range s.sortedCredentialIDs() {
		c := s.credentials[id]
		if c.Kind == kindClient && c.Name == name && c.Check(now) == nil {
			return id, true
		}
	}
	return "", false
}

func (s *Store) createToken(c command.CreateToken) (Credential, error) {
	rec := c.Credential
	if rec.ID == "" || rec.Hash == "" || !rotatedKind(rec.Kind) {
		return Credential{}, fmt.Errorf("%w: token without id, hash or a client/join/instance kind", ErrInvalid)
	}
	if _, dup := s.credentials[rec.ID]; dup {
		return Credential{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	if rec.Kind != kindClient && rec.Team != "" {
		return Credential{}, fmt.Errorf("%w: only a client token belongs to a team", ErrInvalid)
	}
	if rec.Kind == kindClient {
		if _, ok := s.team(command.TeamOf(rec.Team)); !ok {
			return Credential{}, fmt.Errorf("team %s: %w", rec.Team, ErrNotFound)
		}
		if id, taken := s.liveClientNamed(rec.Name, c.Now); taken {
			return Credential{}, fmt.Errorf("client token %s is already named %q; revoke it first or choose another name: %w", id, rec.Name, ErrConflict)
		}
	}
	for _, g := range rec.Groups {
		if !s.groups.Has(g) {
			return Credential{}, fmt.Errorf("group %s: %w", g, ErrNotFound)
		}
	}
	cred := &Credential{CredentialRecord: rec}
	s.credentials[rec.ID] = cred
	detail := "kind " + rec.Kind + ", name " + rec.Name
	switch rec.Kind {
	case kindClient:
		detail += ", roles " + strings.Join(rec.Roles, ",") + ", team " + command.TeamOf(rec.Team)
	case kindJoin:
		detail += fmt.Sprintf(", max_uses %d, requires_approval %t", rec.MaxUses, rec.RequiresApproval)
		if len(rec.Groups) > 0 {
			detail += ", groups " + strings.Join(rec.Groups, ",")
		}
	case kindInstance:
		detail += ", instance " + rec.InstanceID
	}
	if !rec.ExpiresAt.IsZero() {
		detail += ", expires " + rec.ExpiresAt.UTC().Format(timeFormat)
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "token.created", Actor: rec.CreatedBy, CredentialID: rec.ID, CredentialKind: rec.Kind, Subject: rec.ID, Team: clientTeam(rec), Source: c.Source, Detail: detail})
	return cred.clone(), nil
}

func (s *Store) revokeToken(c command.RevokeToken) (Credential, error) {
	cred, ok := s.credentials[c.TokenID]
	if !ok || !rotatedKind(cred.Kind) {
		return Credential{}, fmt.Errorf("token %s (worker credentials are revoked with their worker): %w", c.TokenID, ErrNotFound)
	}
	if cred.Revoked {
		return cred.clone(), nil
	}
	cred.Revoked, cred.RevokedAt, cred.RevokedBy = true, c.Now, c.By
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "token.revoked", Actor: c.By, CredentialID: cred.ID, CredentialKind: cred.Kind, Subject: cred.ID, Source: c.Source, Detail: "name " + cred.Name})
	return cred.clone(), nil
}

// redeem checks that token id may register a worker now and counts the
// use. It is called inside the apply that creates the worker.
func (s *Store) redeem(id, origin, instanceID string, now time.Time) (*Credential, error) {
	cred, ok := s.credentials[id]
	if !ok || (cred.Kind != kindJoin && cred.Kind != kindInstance) {
		return nil, fmt.Errorf("token %s is not a join or instance token: %w", id, ErrCredentialUnusable)
	}
	if cred.Kind == kindInstance && (origin != originProvider || instanceID != cred.InstanceID) {
		return nil, fmt.Errorf("instance token %s is bound to another instance: %w", id, ErrForbidden)
	}
	if cred.Kind == kindJoin && origin == originProvider {
		return nil, fmt.Errorf("a provider worker needs an instance token, not a join token: %w", ErrForbidden)
	}
	if err := cred.Check(now); err != nil {
		return nil, err
	}
	cred.Uses++
	cred.LastUsedAt = now
	return cred, nil
}

// Tokens lists client, join and instance tokens by id (never a hash).
func (s *Store) Tokens() []Credential {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Credential{}
	for _, id := range s.sortedCredentialIDs() {
		if c := s.credentials[id]; rotatedKind(c.Kind) {
			out = append(out, c.clone())
		}
	}
	return out
}

// Token returns one client, join or instance token.
func (s *Store) Token(id string) (Credential, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.credentials[id]
	if !ok || !rotatedKind(c.Kind) {
		return Credential{}, fmt.Errorf("token %s: %w", id, ErrNotFound)
	}
	return c.clone(), nil
}

// clientTeam is a client token's team, and nothing for other kinds.
func clientTeam(rec command.CredentialRecord) string {
	if rec.Kind != kindClient {
		return ""
	}
	return command.TeamOf(rec.Team)
}
