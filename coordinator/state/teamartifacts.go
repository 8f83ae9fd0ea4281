package state

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A team's artifact quota counts the bytes charged to it (package
// artifacts, quota.go, says how); the state says which of a team's tasks
// still keep a checkpoint, and which teams a worker's upload may be
// charged to.

// releaseCheckpoint stops charging team for the checkpoint digest that a
// newer one replaced on task replaced, unless another of the team's tasks
// still keeps it as its latest.
func (s *Store) releaseCheckpoint(replaced, digest, team string) {
	s.artifacts.Release(digest, team, func() bool {
		for _, id := range s.jobOrder {
			j := s.jobs.Get(id)
			if command.TeamOf(j.Team) != team || j.Spec.Checkpoint == nil {
				continue
			}
			for _, tid := range j.TaskIDs {
				if t, ok := s.tasks.Lookup(tid); ok && tid != replaced && t.Checkpoint != nil && t.Checkpoint.SHA256 == digest {
					return true
				}
			}
		}
		return false
	})
}

// TeamArtifactRoom is a team's artifact quota and the bytes charged to it
// now; limited is false when the team has no artifact quota (or does not
// exist).
func (s *Store) TeamArtifactRoom(team string) (used, limit int64, limited bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.teams.Get(command.TeamOf(team))
	if !ok || t.Settings.ArtifactQuotaBytes == nil {
		return 0, 0, false
	}
	return s.artifacts.BytesOfTeam(t.Name), *t.Settings.ArtifactQuotaBytes, true
}

// UploadTeams are the teams of the jobs whose tasks workerID holds and
// that may upload (they declare outputs or a checkpoint), sorted: the
// teams a worker's upload may be charged to.
func (s *Store) UploadTeams(workerID string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	w, ok := s.workers[workerID]
	if !ok {
		return nil
	}
	for id := range w.Held() {
		j := s.jobs.Get(s.tasks.Get(id).JobID)
		if len(j.Spec.Outputs) == 0 && j.Spec.Checkpoint == nil {
			continue
		}
		if team := command.TeamOf(j.Team); !slices.Contains(out, team) {
			out = append(out, team)
		}
	}
	slices.Sort(out)
	return out
}
