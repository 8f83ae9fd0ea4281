package state

import (
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func (s *Store) importBootstrap(c command.ImportBootstrap) Result {
	if c.Generation <= s.bootstrapGeneration {
		return Result{Value: false}
	}
	if s.bootstrapGeneration > 0 {
		// Rotation: every client and join credential is replaced.
		for _, cr := range s.credentials {
			if cr.Kind == "client" || cr.Kind == "join" {
				cr.Revoked = true
			}
		}
	}
	for _, rec := range c.Credentials {
		s.credentials[rec.ID] = &Credential{CredentialRecord: rec}
	}
	s.bootstrapGeneration = c.Generation
	return Result{Value: true}
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

// CredentialIDs lists credential ids in order (for tests and audit).
func (s *Store) CredentialIDs() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.credentials))
	for id := range s.credentials {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
