package state

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A team's artifact quota (TeamSettings.ArtifactQuotaBytes) counts the
// bytes of the recorded artifacts charged to it (Artifact.ChargedTeam),
// each once:
//
//   - a client's upload is charged to the client token's team when it is
//     first recorded;
//   - a worker's upload is charged to the team of the tasks it holds that
//     may upload (RecordArtifact.ChargeTeam, chosen at the HTTP edge); a
//     finish naming it as an output, or a report naming it as a
//     checkpoint, charges it to that task's job's team, if the reporting
//     worker uploaded it;
//   - a task's checkpoint that a newer one replaces is no longer charged
//     (releaseCheckpoint): only the latest per task counts;
//   - collected artifacts stop counting.
//
// The credential quota (ArtifactBytesBy) holds besides.

// chargeOutput charges a, reported by workerID as an output or a
// checkpoint of a task of team, to team when workerID uploaded it: a
// worker's upload belongs to the job whose task it ran.
func chargeOutput(a *Artifact, workerID, team string) {
	if a.UploadedBy == workerID && workerID != "" {
		a.ChargedTeam = team
	}
}

// releaseCheckpoint stops charging team for the checkpoint digest that a
// newer one replaced on task replaced, unless another of the team's tasks
// still keeps it as its latest.
func (s *Store) releaseCheckpoint(replaced, digest, team string) {
	a, ok := s.artifacts[digest]
	if !ok || a.ChargedTeam != team {
		return
	}
	for _, id := range s.jobOrder {
		j := s.jobs.Get(id)
		if command.TeamOf(j.Team) != team || j.Spec.Checkpoint == nil {
			continue
		}
		for _, tid := range j.TaskIDs {
			if t, ok := s.tasks.Lookup(tid); ok && tid != replaced && t.Checkpoint != nil && t.Checkpoint.SHA256 == digest {
				return
			}
		}
	}
	a.ChargedTeam = ""
}

// artifactBytesOfTeam is how many bytes of recorded artifacts are
// charged to team; mu must be held.
func (s *Store) artifactBytesOfTeam(team string) int64 {
	var n int64
	for _, a := range s.artifacts {
		if a.ChargedTeam == team {
			n += a.Size
		}
	}
	return n
}

// artifactBytesByTeam is artifactBytesOfTeam for every team charged;
// mu must be held.
func (s *Store) artifactBytesByTeam() map[string]int64 {
	out := map[string]int64{}
	for _, a := range s.artifacts {
		if a.ChargedTeam != "" {
			out[a.ChargedTeam] += a.Size
		}
	}
	return out
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
	return s.artifactBytesOfTeam(t.Name), *t.Settings.ArtifactQuotaBytes, true
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
	for id := range w.active {
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
