package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// A team owns jobs, client tokens, quota and usage. Team default always
// exists: it is the team of every job and client token written before
// teams, so upgrading needs no migration. It is held in the table only
// once an admin changed its settings; until then it reads as
// defaultTeam.

// DefaultWeightCenti is a team's weight when none is set: 1.
const DefaultWeightCenti = command.CentiGPUsPerGPU

// MaxTeams bounds the teams of a cluster.
const MaxTeams = 1000

// Team is a team's record.
type Team struct {
	Name      string               `json:"name"`
	Settings  command.TeamSettings `json:"settings"`
	CreatedAt time.Time            `json:"created_at,omitzero"`
	CreatedBy string               `json:"created_by,omitempty"`
	UpdatedAt time.Time            `json:"updated_at,omitzero"`
	UpdatedBy string               `json:"updated_by,omitempty"`
}

func (t Team) clone() Team {
	if t.Settings.BorrowLimitCenti != nil {
		v := *t.Settings.BorrowLimitCenti
		t.Settings.BorrowLimitCenti = &v
	}
	if t.Settings.ArtifactQuotaBytes != nil {
		v := *t.Settings.ArtifactQuotaBytes
		t.Settings.ArtifactQuotaBytes = &v
	}
	return t
}

func defaultTeam() *Team {
	return &Team{Name: command.DefaultTeam, Settings: command.TeamSettings{WeightCenti: DefaultWeightCenti}}
}

// team returns a team's record, default's even before it was written.
func (s *Store) team(name string) (*Team, bool) {
	if t, ok := s.teams[name]; ok {
		return t, true
	}
	if name == command.DefaultTeam {
		return defaultTeam(), true
	}
	return nil, false
}

func (s *Store) createTeam(c command.CreateTeam) (TeamRecord, error) {
	if err := checkTeamSettings(c.Settings); err != nil {
		return TeamRecord{}, err
	}
	if _, ok := s.team(c.Name); ok {
		return TeamRecord{}, fmt.Errorf("team %s exists: %w", c.Name, ErrConflict)
	}
	if len(s.teams) >= MaxTeams {
		return TeamRecord{}, fmt.Errorf("%d teams, the most a cluster holds: %w", MaxTeams, ErrConflict)
	}
	t := &Team{Name: c.Name, Settings: c.Settings, CreatedAt: c.Now, CreatedBy: c.By, UpdatedAt: c.Now, UpdatedBy: c.By}
	s.teams[c.Name] = t
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "team.created", Actor: c.By, Subject: c.Name, Team: c.Name, Source: c.Source, Detail: describeTeam(t.Settings)})
	return s.teamRecord(t), nil
}

func (s *Store) updateTeam(c command.UpdateTeam) (TeamRecord, error) {
	old, ok := s.team(c.Name)
	if !ok {
		return TeamRecord{}, fmt.Errorf("team %s: %w", c.Name, ErrNotFound)
	}
	t := old.clone()
	if c.WeightCenti != nil {
		t.Settings.WeightCenti = *c.WeightCenti
	}
	if c.QuotaCentiGPUs != nil {
		t.Settings.QuotaCentiGPUs = *c.QuotaCentiGPUs
	}
	if err := setOrClear(&t.Settings.BorrowLimitCenti, c.BorrowLimitCenti, c.ClearBorrowLimit, "a borrow limit"); err != nil {
		return TeamRecord{}, err
	}
	if err := setOrClear(&t.Settings.ArtifactQuotaBytes, c.ArtifactQuotaBytes, c.ClearArtifactQuota, "an artifact quota"); err != nil {
		return TeamRecord{}, err
	}
	if err := checkTeamSettings(t.Settings); err != nil {
		return TeamRecord{}, err
	}
	t.UpdatedAt, t.UpdatedBy = c.Now, c.By
	s.teams[c.Name] = &t
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "team.updated", Actor: c.By, Subject: c.Name, Team: c.Name, Source: c.Source, Detail: describeTeam(t.Settings)})
	return s.teamRecord(&t), nil
}

// setOrClear sets an optional setting to a copy of v, or clears it, or
// leaves it when neither is asked; both at once is invalid.
func setOrClear(dst **int64, v *int64, clear bool, what string) error {
	switch {
	case clear && v != nil:
		return fmt.Errorf("%w: %s both set and cleared", ErrInvalid, what)
	case clear:
		*dst = nil
	case v != nil:
		n := *v
		*dst = &n
	}
	return nil
}

func (s *Store) deleteTeam(c command.DeleteTeam) (TeamRecord, error) {
	t, ok := s.team(c.Name)
	if !ok {
		return TeamRecord{}, fmt.Errorf("team %s: %w", c.Name, ErrNotFound)
	}
	if c.Name == command.DefaultTeam {
		return TeamRecord{}, fmt.Errorf("team %s always exists: %w", c.Name, ErrConflict)
	}
	if n := s.unfinishedJobsOf(c.Name); n > 0 {
		return TeamRecord{}, fmt.Errorf("team %s has %d unfinished jobs; cancel them or wait for them to end: %w", c.Name, n, ErrConflict)
	}
	rec := s.teamRecord(t)
	revoked := s.credentials.RevokeClientsOf(c.Name, c.By, c.Now)
	delete(s.teams, c.Name)
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

// Team bounds, in hundredths.
const (
	MaxTeamWeightCenti = 1000 * command.CentiGPUsPerGPU
	MaxTeamCentiGPUs   = 1_000_000 * command.CentiGPUsPerGPU
	// MaxTeamArtifactBytes bounds a team's artifact quota: 1 PiB.
	MaxTeamArtifactBytes = 1 << 50
)

func checkTeamSettings(t command.TeamSettings) error {
	switch {
	case t.WeightCenti <= 0 || t.WeightCenti > MaxTeamWeightCenti:
		return fmt.Errorf("%w: weight must be above 0 and at most %d", ErrInvalid, MaxTeamWeightCenti/command.CentiGPUsPerGPU)
	case t.QuotaCentiGPUs < 0 || t.QuotaCentiGPUs > MaxTeamCentiGPUs:
		return fmt.Errorf("%w: quota.gpus must be 0 to %d", ErrInvalid, MaxTeamCentiGPUs/command.CentiGPUsPerGPU)
	case t.BorrowLimitCenti != nil && (*t.BorrowLimitCenti < 0 || *t.BorrowLimitCenti > MaxTeamCentiGPUs):
		return fmt.Errorf("%w: borrow_limit.gpus must be 0 to %d", ErrInvalid, MaxTeamCentiGPUs/command.CentiGPUsPerGPU)
	case t.ArtifactQuotaBytes != nil && (*t.ArtifactQuotaBytes < 0 || *t.ArtifactQuotaBytes > MaxTeamArtifactBytes):
		return fmt.Errorf("%w: quota.artifact_bytes must be 0 to %d", ErrInvalid, int64(MaxTeamArtifactBytes))
	}
	return nil
}

func describeTeam(t command.TeamSettings) string {
	d := fmt.Sprintf("weight %s, quota %s GPUs", centi(t.WeightCenti), centi(t.QuotaCentiGPUs))
	if t.BorrowLimitCenti != nil {
		d += ", borrow limit " + centi(*t.BorrowLimitCenti) + " GPUs"
	}
	if t.ArtifactQuotaBytes != nil {
		d += fmt.Sprintf(", artifact quota %d bytes", *t.ArtifactQuotaBytes)
	}
	return d
}

// centi renders hundredths as a decimal ("1", "0.5", "2.25").
func centi(v int64) string {
	s := fmt.Sprintf("%d.%02d", v/100, v%100)
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "0"), "0"), ".")
}

// TeamRecord is a team with its live figures.
type TeamRecord struct {
	Team  Team
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

func (s *Store) teamRecord(t *Team) TeamRecord {
	u := s.teamUsage()[t.Name]
	u.ArtifactBytes = s.artifactBytesOfTeam(t.Name)
	return TeamRecord{Team: t.clone(), Usage: u}
}

// Teams lists every team, default among them, by name.
func (s *Store) Teams() []TeamRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	usage := s.teamUsage()
	for team, n := range s.artifactBytesByTeam() {
		u := usage[team]
		u.ArtifactBytes = n
		usage[team] = u
	}
	names := make([]string, 0, len(s.teams)+1)
	for name := range s.teams {
		names = append(names, name)
	}
	if _, ok := s.teams[command.DefaultTeam]; !ok {
		names = append(names, command.DefaultTeam)
	}
	slices.Sort(names)
	out := make([]TeamRecord, len(names))
	for i, name := range names {
		t, _ := s.team(name)
		out[i] = TeamRecord{Team: t.clone(), Usage: usage[name]}
	}
	return out
}

// TeamByName returns one team with its live figures.
func (s *Store) TeamByName(name string) (TeamRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.team(name)
	if !ok {
		return TeamRecord{}, fmt.Errorf("team %s: %w", name, ErrNotFound)
	}
	return s.teamRecord(t), nil
}

// TeamExists reports whether a team exists.
func (s *Store) TeamExists(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.team(name)
	return ok
}
