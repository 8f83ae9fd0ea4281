package httpapi

import (
	"sync"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Each credential (by name: a client token's, a worker's) may keep at most
// Quotas.MaxArtifactBytes of artifacts it uploaded first, so that neither
// a submit token nor a task's sparse outputs can fill the coordinators'
// disks. What counts is the recorded artifacts (state.ArtifactBytesBy)
// plus the uploads of the same name under way on the leader: two
// concurrent uploads cannot both take the last room. An upload that does
// not say its length is checked again once its bytes are in; refused, its
// bytes are never recorded and the blob sweep removes them. Artifacts no
// job names are collected after the retention, which frees room.

// DefaultMaxArtifactBytes is each credential's artifact quota: 20 GiB.
const DefaultMaxArtifactBytes int64 = 20 << 30

// inflightBytes counts the bytes of uploads under way, per credential name.
type inflightBytes struct {
	mu sync.Mutex
	by map[string]int64
}

// artifactRoom reserves n bytes (0 when the length is not known) for an
// upload by name, or refuses it when the name's recorded and in-flight
// bytes and n would pass the quota. release gives the reservation back.
func (s *Server) artifactRoom(name string, n int64) (release func(), err error) {
	limit := s.quotas.MaxArtifactBytes
	if limit < 0 {
		return func() {}, nil
	}
	used := s.store.ArtifactBytesBy(name)
	s.inflight.mu.Lock()
	defer s.inflight.mu.Unlock()
	pending := s.inflight.by[name]
	if used+pending+n > limit {
		return nil, artifactQuotaError(name, used, pending, n, limit)
	}
	if s.inflight.by == nil {
		s.inflight.by = map[string]int64{}
	}
	s.inflight.by[name] += n
	return func() {
		s.inflight.mu.Lock()
		defer s.inflight.mu.Unlock()
		if s.inflight.by[name] -= n; s.inflight.by[name] <= 0 {
			delete(s.inflight.by, name)
		}
	}, nil
}

// checkArtifactRoom checks an upload whose length was not known in
// advance, once its size is: reserved bytes were already counted.
func (s *Server) checkArtifactRoom(name string, size, reserved int64) error {
	limit := s.quotas.MaxArtifactBytes
	if limit < 0 {
		return nil
	}
	used := s.store.ArtifactBytesBy(name)
	s.inflight.mu.Lock()
	pending := s.inflight.by[name] - reserved
	s.inflight.mu.Unlock()
	if used+pending+size > limit {
		return artifactQuotaError(name, used, pending, size, limit)
	}
	return nil
}

func artifactQuotaError(name string, used, pending, n, limit int64) error {
	return newError(api.CodeBodyTooLarge, "artifact quota of %s: %d bytes of artifacts uploaded and %d in uploads under way, so %d more would pass its %d bytes; artifacts no job names are collected after the retention (`gpulayer operator gc` sooner)",
		shortQuote(name), used, pending, n, limit)
}
