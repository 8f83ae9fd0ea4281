// Package creds is the credentials' room: every stored credential (a
// hash, never a secret), the rule that says whether one may be used now,
// a join or instance token's redemption, the rotation of an init file's
// tokens and the revocations. The state applies the credential commands
// through it, checks what only it knows (a client token's team, a join
// token's groups, the worker a credential names) and audits each change.
// It knows no other room but the state's value types and sentinel
// errors.
package creds

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Credential kinds as stored (the auth package's kinds, without importing
// it).
const (
	KindClient   = "client"
	KindJoin     = "join"
	KindInstance = "instance"
	KindWorker   = "worker"
)

// Rotated reports whether a kind is one of the enrollment and client
// credentials that rotation replaces (worker credentials are
// independent).
func Rotated(kind string) bool {
	return kind == KindClient || kind == KindJoin || kind == KindInstance
}

// Credential is a stored credential: a hash, never a secret.
type Credential struct {
	command.CredentialRecord
	Revoked   bool      `json:"revoked,omitempty"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	RevokedBy string    `json:"revoked_by,omitempty"`
	// Uses counts registrations redeemed with a join or instance token.
	Uses       int       `json:"uses,omitempty"`
	LastUsedAt time.Time `json:"last_used_at,omitzero"`
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
		return fmt.Errorf("%s token %s was revoked or rotated: %w", c.Kind, c.ID, stateerr.ErrCredentialUnusable)
	case c.Expired(now):
		return fmt.Errorf("%s token %s has expired: %w", c.Kind, c.ID, stateerr.ErrCredentialUnusable)
	case c.UsedUp():
		return fmt.Errorf("%s token %s has been used up: %w", c.Kind, c.ID, stateerr.ErrCredentialUnusable)
	}
	return nil
}

// Clone is a deep copy of c.
func (c *Credential) Clone() Credential {
	out := *c
	out.Roles = slices.Clone(c.Roles)
	out.Groups = slices.Clone(c.Groups)
	out.Labels = maps.Clone(c.Labels)
	out.GPUModels = slices.Clone(c.GPUModels)
	return out
}

// revoke marks c revoked by by at now.
func (c *Credential) revoke(by string, now time.Time) {
	c.Revoked, c.RevokedAt, c.RevokedBy = true, now, by
}

// Table is every credential, by id. It follows its owner's locking:
// writes under the write lock (inside Apply), reads under the read lock.
type Table struct{ m map[string]*Credential }

// New returns an empty table.
func New() *Table { return &Table{m: map[string]*Credential{}} }

// Restore returns a table of list, as a snapshot lists it.
func Restore(list []*Credential) (*Table, error) {
	t := New()
	for _, c := range list {
		if c == nil || t.m[c.ID] != nil {
			return nil, fmt.Errorf("credential listed twice or empty: %w", stateerr.ErrInvalid)
		}
		t.m[c.ID] = c
	}
	return t, nil
}

// Get returns the stored credential id: the table's own record, which
// only Apply may change.
func (t *Table) Get(id string) (*Credential, bool) {
	c, ok := t.m[id]
	return c, ok
}

// Has reports whether credential id exists.
func (t *Table) Has(id string) bool { _, ok := t.m[id]; return ok }

// Put stores rec as a new credential.
func (t *Table) Put(rec command.CredentialRecord) *Credential {
	c := &Credential{CredentialRecord: rec}
	t.m[rec.ID] = c
	return c
}

// Delete forgets credential id.
func (t *Table) Delete(id string) { delete(t.m, id) }

// Len is how many credentials there are.
func (t *Table) Len() int { return len(t.m) }

// IDs lists the credentials' ids, sorted.
func (t *Table) IDs() []string { return slices.Sorted(maps.Keys(t.m)) }

// AppendTo appends a copy of every credential to dst, in no set order (a
// snapshot's capture sorts them), sharing their slices and maps, which
// Apply replaces and never edits.
func (t *Table) AppendTo(dst []Credential) []Credential {
	for _, c := range t.m {
		dst = append(dst, *c)
	}
	return dst
}

// Revoke marks credential id revoked by by at now, if it exists (again,
// if it was already: a worker revoked twice, a reissue of a revoked
// credential).
func (t *Table) Revoke(id, by string, now time.Time) {
	if c, ok := t.m[id]; ok {
		c.revoke(by, now)
	}
}

// Rotate revokes every live client, join and instance token, as a new
// init file's import does, and says how many it revoked. Worker
// credentials are independent and untouched.
func (t *Table) Rotate(now time.Time) (revoked int) {
	for _, id := range t.IDs() {
		if c := t.m[id]; Rotated(c.Kind) && !c.Revoked {
			c.revoke("rotation", now)
			revoked++
		}
	}
	return revoked
}

// LiveClientNamed reports whether a usable client token is named name.
func (t *Table) LiveClientNamed(name string, now time.Time) (string, bool) {
	for _, id := range t.IDs() {
		c := t.m[id]
		if c.Kind == KindClient && c.Name == name && c.Check(now) == nil {
			return id, true
		}
	}
	return "", false
}

// RevokeClientsOf revokes every live client token of team and lists
// them.
func (t *Table) RevokeClientsOf(team, by string, now time.Time) (revoked []string) {
	for _, id := range t.IDs() {
		c := t.m[id]
		if c.Kind == KindClient && command.TeamOf(c.Team) == team && !c.Revoked {
			c.revoke(by, now)
			revoked = append(revoked, id)
		}
	}
	return revoked
}

// RevokeToken revokes a client, join or instance token; changed is false
// when it was revoked already.
func (t *Table) RevokeToken(id, by string, now time.Time) (tok Credential, changed bool, err error) {
	c, ok := t.m[id]
	if !ok || !Rotated(c.Kind) {
		return Credential{}, false, fmt.Errorf("token %s (worker credentials are revoked with their worker): %w", id, stateerr.ErrNotFound)
	}
	if c.Revoked {
		return c.Clone(), false, nil
	}
	c.revoke(by, now)
	return c.Clone(), true, nil
}

// Redeem checks that token id may register a worker now and counts the
// use: a join token for a worker that is not a provider's, an instance
// token for the provider's instance it is bound to. It is called inside
// the apply that creates the worker.
func (t *Table) Redeem(id string, provider bool, instanceID string, now time.Time) (*Credential, error) {
	c, ok := t.m[id]
	if !ok || (c.Kind != KindJoin && c.Kind != KindInstance) {
		return nil, fmt.Errorf("token %s is not a join or instance token: %w", id, stateerr.ErrCredentialUnusable)
	}
	if c.Kind == KindInstance && (!provider || instanceID != c.InstanceID) {
		return nil, fmt.Errorf("instance token %s is bound to another instance: %w", id, stateerr.ErrForbidden)
	}
	if c.Kind == KindJoin && provider {
		return nil, fmt.Errorf("a provider worker needs an instance token, not a join token: %w", stateerr.ErrForbidden)
	}
	if err := c.Check(now); err != nil {
		return nil, err
	}
	c.Uses++
	c.LastUsedAt = now
	return c, nil
}

// Tokens lists client, join and instance tokens by id (never a hash).
func (t *Table) Tokens() []Credential {
	out := []Credential{}
	for _, id := range t.IDs() {
		if c := t.m[id]; Rotated(c.Kind) {
			out = append(out, c.Clone())
		}
	}
	return out
}

// Token returns one client, join or instance token.
func (t *Table) Token(id string) (Credential, error) {
	c, ok := t.m[id]
	if !ok || !Rotated(c.Kind) {
		return Credential{}, fmt.Errorf("token %s: %w", id, stateerr.ErrNotFound)
	}
	return c.Clone(), nil
}
