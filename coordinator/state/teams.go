package state

import (
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// The team commands: the room (package teams) keeps the records, their
// bounds and team default's rule; the state refuses to delete a team
// with unfinished jobs, revokes a deleted team's client tokens and
// audits.

func (s *Store) createTeam(c command.CreateTeam) (TeamRecord, error) {
	t, err := s.teams.Create(c.Name, c.Settings, c.By, c.Now)
	if err != nil {
		return TeamRecord{}, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "team.created", Actor: c.By, Subject: c.Name, Team: c.Name, Source: c.Source, Detail: teams.Describe(t.Settings)})
	return s.teamRecord(t), nil
}

func (s *Store) updateTeam(c command.UpdateTeam) (TeamRecord, error) {
	t, err := s.teams.Update(c)
	if err != nil {
		return TeamRecord{}, err
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "team.updated", Actor: c.By, Subject: c.Name, Team: c.Name, Source: c.Source, Detail: teams.Describe(t.Settings)})
	return s.teamRecord(t), nil
}

func (s *Store) deleteTeam(c command.DeleteTeam) (TeamRecord, error) {
	var rec TeamRecord
	err := s.teams.Delete(c.Name, func() error {
		if n := s.unfinishedJobsOf(c.Name); n > 0 {
			return fmt.Errorf("team %s has %d unfinished jobs; cancel them or wait for them to end: %w", c.Name, n, ErrConflict)
		}
		t, _ := s.teams.Get(c.Name)
		rec = s.teamRecord(t) // its figures before it goes
		return nil
	})
	if err != nil {
		return TeamRecord{}, err
	}
	revoked := s.credentials.RevokeClientsOf(c.Name, c.By, c.Now)
	detail := "no client token"
	if len(revoked) > 0 {
		detail = "revoked its client tokens " + strings.Join(revoked, ",")
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "team.deleted", Actor: c.By, Subject: c.Name, Team: c.Name, Source: c.Source, Detail: detail})
	return rec, nil
}

// unfinishedJobsOf counts a team's jobs that have not ended. Deleting a
// team is rare, so it walks the jobs rather than keep an index.
func (s *Store) unfinishedJobsOf(team string) int {
	n := 0
	for _, id := range s.jobOrder {
		j := s.jobs.Get(id)
		if command.TeamOf(j.Team) == team && !s.jobTerminal(j) {
			n++
		}
	}
	return n
}

// TeamRecord is a team with its live figures.
type TeamRecord struct {
	Team  teams.Team
	Usage TeamUsage
}

// TeamUsage is what a team runs and waits for now: GPUs in hundredths,
// and the bytes of artifacts its quota counts.
type TeamUsage struct {
	CentiGPUsInUse int64
	RunningTasks   int
	PendingTasks   int
	ArtifactBytes  int64
}

func (s *Store) teamRecord(t *teams.Team) TeamRecord {
	u := s.teamUsage()[t.Name]
	u.ArtifactBytes = s.artifacts.BytesOfTeam(t.Name)
	return TeamRecord{Team: t.Clone(), Usage: u}
}

// Teams lists every team, default among them, by name.
func (s *Store) Teams() []TeamRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	usage := s.teamUsage()
	for team, n := range s.artifacts.BytesByTeam() {
		u := usage[team]
		u.ArtifactBytes = n
		usage[team] = u
	}
	names := s.teams.Names()
	out := make([]TeamRecord, len(names))
	for i, name := range names {
		t, _ := s.teams.Get(name)
		out[i] = TeamRecord{Team: t.Clone(), Usage: usage[name]}
	}
	return out
}

// TeamByName returns one team with its live figures.
func (s *Store) TeamByName(name string) (TeamRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.teams.Get(name)
	if !ok {
		return TeamRecord{}, fmt.Errorf("team %s: %w", name, ErrNotFound)
	}
	return s.teamRecord(t), nil
}

// TeamExists reports whether a team exists.
func (s *Store) TeamExists(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.teams.Get(name)
	return ok
}
