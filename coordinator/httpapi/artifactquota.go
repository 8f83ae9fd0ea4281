package httpapi

import (
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Each credential (by name: a client token's, a worker's) may keep at most
// Quotas.MaxArtifactBytes of artifacts it uploaded first, so that neither
// a submit token nor a task's sparse outputs can fill the coordinators'
// disks; and a team with an artifact quota (quota.artifact_bytes) may
// keep at most that many bytes charged to it (state/teamartifacts.go):
// its client tokens' uploads, and its jobs' tasks' outputs and latest
// checkpoints. What counts is the recorded artifacts plus the uploads of
// the same name or team under way on the leader: two concurrent uploads
// cannot both take the last room. An upload that does not say its length
// is checked again once its bytes are in; refused, its bytes are never
// recorded and the blob sweep removes them. Artifacts no job names are
// collected after the retention, which frees room.

// DefaultMaxArtifactBytes is each credential's artifact quota: 20 GiB.
const DefaultMaxArtifactBytes int64 = 20 << 30

// inflightBytes counts the bytes of uploads under way, per credential name
// and per team (teamKey).
type inflightBytes struct {
	mu sync.Mutex
	by map[string]int64
}

// teamKey is a team's key in inflightBytes: no credential name holds a
// NUL byte.
func teamKey(team string) string { return "\x00team " + team }

// uploadTeams are the teams an upload by p may be charged to: a client's
// own team, or the teams of the tasks a worker holds that may upload. The
// first is the one charged when the record is made; every one of them
// must have room.
func (s *Server) uploadTeams(p auth.Principal) []string {
	if p.Kind == auth.KindWorker {
		return s.store.UploadTeams(p.WorkerID)
	}
	return []string{command.TeamOf(p.Team)}
}

// artifactRoom reserves n bytes (0 when the length is not known) for an
// upload by p, charged to the teams teams, or refuses it when p's name,
// or one of the teams with a quota, would pass its quota with its
// recorded and in-flight bytes and n. release gives the reservation back.
func (s *Server) artifactRoom(p auth.Principal, teams []string, n int64) (release func(), err error) {
	s.inflight.mu.Lock()
	defer s.inflight.mu.Unlock()
	if err := s.roomLocked(p.Name, teams, n, 0); err != nil {
		return nil, err
	}
	keys := []string{p.Name}
	for _, t := range teams {
		keys = append(keys, teamKey(t))
	}
	if s.inflight.by == nil {
		s.inflight.by = map[string]int64{}
	}
	for _, k := range keys {
		s.inflight.by[k] += n
	}
	return func() {
		s.inflight.mu.Lock()
		defer s.inflight.mu.Unlock()
		for _, k := range keys {
			if s.inflight.by[k] -= n; s.inflight.by[k] <= 0 {
				delete(s.inflight.by, k)
			}
		}
	}, nil
}

// checkArtifactRoom checks an upload whose length was not known in
// advance, once its size is: reserved bytes were already counted.
func (s *Server) checkArtifactRoom(p auth.Principal, teams []string, size, reserved int64) error {
	s.inflight.mu.Lock()
	defer s.inflight.mu.Unlock()
	return s.roomLocked(p.Name, teams, size, reserved)
}

// roomLocked checks that n more bytes fit the quotas of name and teams,
// reserved of their in-flight bytes being this upload's own; inflight.mu
// is held.
func (s *Server) roomLocked(name string, teams []string, n, reserved int64) error {
	if limit := s.quotas.MaxArtifactBytes; limit >= 0 {
		used := s.store.ArtifactBytesBy(name)
		pending := s.inflight.by[name] - reserved
		if used+pending+n > limit {
			return artifactQuotaError(shortQuote(name), used, pending, n, limit)
		}
	}
	for _, team := range teams {
		used, limit, limited := s.store.TeamArtifactRoom(team)
		if !limited {
			continue
		}
		pending := s.inflight.by[teamKey(team)] - reserved
		if used+pending+n > limit {
			return artifactQuotaError("team "+shortQuote(team), used, pending, n, limit)
		}
	}
	return nil
}

func artifactQuotaError(whose string, used, pending, n, limit int64) error {
	return newError(api.CodeBodyTooLarge, "artifact quota of %s: %d bytes of artifacts uploaded and %d in uploads under way, so %d more would pass its %d bytes; artifacts no job names are collected after the retention (`gpulayer operator gc` sooner)",
		whose, used, pending, n, limit)
}
