// Package teams is the teams' room: each team's record and settings
// (weight, quota, borrow limit, artifact quota), their bounds, and the
// rule that team default always exists (it is the team of every job and
// client token written before teams, and is held in the table only once
// an admin changed its settings). The state applies the team commands
// through it, refuses to delete a team with unfinished jobs, revokes a
// deleted team's client tokens and audits. It knows no other room but
// the state's value types and sentinel errors.
package teams

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// DefaultWeightCenti is a team's weight when none is set: 1.
const DefaultWeightCenti = command.CentiGPUsPerGPU

// MaxTeams bounds the teams of a cluster.
const MaxTeams = 1000

// Team bounds, in hundredths.
const (
	MaxWeightCenti = 1000 * command.CentiGPUsPerGPU
	MaxCentiGPUs   = 1_000_000 * command.CentiGPUsPerGPU
	// MaxArtifactBytes bounds a team's artifact quota: 1 PiB.
	MaxArtifactBytes = 1 << 50
)

// Team is a team's record.
type Team struct {
	Name      string               `json:"name"`
	Settings  command.TeamSettings `json:"settings"`
	CreatedAt time.Time            `json:"created_at,omitzero"`
	CreatedBy string               `json:"created_by,omitempty"`
	UpdatedAt time.Time            `json:"updated_at,omitzero"`
	UpdatedBy string               `json:"updated_by,omitempty"`
}

// Clone is a deep copy of t.
func (t Team) Clone() Team {
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

// checkSettings refuses settings out of their bounds (ErrInvalid).
func checkSettings(t command.TeamSettings) error {
	switch {
	case t.WeightCenti <= 0 || t.WeightCenti > MaxWeightCenti:
		return fmt.Errorf("%w: weight must be above 0 and at most %d", stateerr.ErrInvalid, MaxWeightCenti/command.CentiGPUsPerGPU)
	case t.QuotaCentiGPUs < 0 || t.QuotaCentiGPUs > MaxCentiGPUs:
		return fmt.Errorf("%w: quota.gpus must be 0 to %d", stateerr.ErrInvalid, MaxCentiGPUs/command.CentiGPUsPerGPU)
	case t.BorrowLimitCenti != nil && (*t.BorrowLimitCenti < 0 || *t.BorrowLimitCenti > MaxCentiGPUs):
		return fmt.Errorf("%w: borrow_limit.gpus must be 0 to %d", stateerr.ErrInvalid, MaxCentiGPUs/command.CentiGPUsPerGPU)
	case t.ArtifactQuotaBytes != nil && (*t.ArtifactQuotaBytes < 0 || *t.ArtifactQuotaBytes > MaxArtifactBytes):
		return fmt.Errorf("%w: quota.artifact_bytes must be 0 to %d", stateerr.ErrInvalid, int64(MaxArtifactBytes))
	}
	return nil
}

// Describe says settings in words, for the audit log.
func Describe(t command.TeamSettings) string {
	d := fmt.Sprintf("weight %s, quota %s GPUs", Centi(t.WeightCenti), Centi(t.QuotaCentiGPUs))
	if t.BorrowLimitCenti != nil {
		d += ", borrow limit " + Centi(*t.BorrowLimitCenti) + " GPUs"
	}
	if t.ArtifactQuotaBytes != nil {
		d += fmt.Sprintf(", artifact quota %d bytes", *t.ArtifactQuotaBytes)
	}
	return d
}

// Centi renders hundredths as a decimal ("1", "0.5", "2.25").
func Centi(v int64) string {
	s := fmt.Sprintf("%d.%02d", v/100, v%100)
	return strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(s, "0"), "0"), ".")
}

// Table is the teams an admin wrote, by name. It follows its owner's
// locking: writes under the write lock (inside Apply), reads under the
// read lock.
type Table struct{ m map[string]*Team }

// New returns an empty table (default exists all the same).
func New() *Table { return &Table{m: map[string]*Team{}} }

// Restore returns a table of list, as a snapshot lists it.
func Restore(list []*Team) (*Table, error) {
	t := New()
	for _, x := range list {
		if x == nil || t.m[x.Name] != nil {
			return nil, fmt.Errorf("team listed twice or empty: %w", stateerr.ErrInvalid)
		}
		if err := checkSettings(x.Settings); err != nil {
			return nil, fmt.Errorf("team %s: %w", x.Name, err)
		}
		t.m[x.Name] = x
	}
	return t, nil
}

// Get returns a team's record, default's even before it was written.
func (t *Table) Get(name string) (*Team, bool) {
	if x, ok := t.m[name]; ok {
		return x, true
	}
	if name == command.DefaultTeam {
		return defaultTeam(), true
	}
	return nil, false
}

// Names lists every team, default among them, sorted.
func (t *Table) Names() []string {
	names := slices.Collect(maps.Keys(t.m))
	if _, ok := t.m[command.DefaultTeam]; !ok {
		names = append(names, command.DefaultTeam)
	}
	slices.Sort(names)
	return names
}

// Copies lists a copy of every team written, in no set order (a
// snapshot's capture sorts them).
func (t *Table) Copies() []Team {
	out := make([]Team, 0, len(t.m))
	for _, x := range t.m {
		out = append(out, x.Clone())
	}
	return out
}

// Create adds team name with settings.
func (t *Table) Create(name string, settings command.TeamSettings, by string, now time.Time) (*Team, error) {
	if err := checkSettings(settings); err != nil {
		return nil, err
	}
	if _, ok := t.Get(name); ok {
		return nil, fmt.Errorf("team %s exists: %w", name, stateerr.ErrConflict)
	}
	if len(t.m) >= MaxTeams {
		return nil, fmt.Errorf("%d teams, the most a cluster holds: %w", MaxTeams, stateerr.ErrConflict)
	}
	x := &Team{Name: name, Settings: settings, CreatedAt: now, CreatedBy: by, UpdatedAt: now, UpdatedBy: by}
	t.m[name] = x
	return x, nil
}

// Update changes what c sets of team c.Name, as one: settings out of
// their bounds change nothing.
func (t *Table) Update(c command.UpdateTeam) (*Team, error) {
	old, ok := t.Get(c.Name)
	if !ok {
		return nil, fmt.Errorf("team %s: %w", c.Name, stateerr.ErrNotFound)
	}
	x := old.Clone()
	if c.WeightCenti != nil {
		x.Settings.WeightCenti = *c.WeightCenti
	}
	if c.QuotaCentiGPUs != nil {
		x.Settings.QuotaCentiGPUs = *c.QuotaCentiGPUs
	}
	if err := setOrClear(&x.Settings.BorrowLimitCenti, c.BorrowLimitCenti, c.ClearBorrowLimit, "a borrow limit"); err != nil {
		return nil, err
	}
	if err := setOrClear(&x.Settings.ArtifactQuotaBytes, c.ArtifactQuotaBytes, c.ClearArtifactQuota, "an artifact quota"); err != nil {
		return nil, err
	}
	if err := checkSettings(x.Settings); err != nil {
		return nil, err
	}
	x.UpdatedAt, x.UpdatedBy = c.Now, c.By
	t.m[c.Name] = &x
	return &x, nil
}

// setOrClear sets an optional setting to a copy of v, or clears it, or
// leaves it when neither is asked; both at once is invalid.
func setOrClear(dst **int64, v *int64, clear bool, what string) error {
	switch {
	case clear && v != nil:
		return fmt.Errorf("%w: %s both set and cleared", stateerr.ErrInvalid, what)
	case clear:
		*dst = nil
	case v != nil:
		n := *v
		*dst = &n
	}
	return nil
}

// Delete removes team name, refusing default (it always exists) and then
// whatever inUse refuses.
func (t *Table) Delete(name string, inUse func() error) error {
	if _, ok := t.Get(name); !ok {
		return fmt.Errorf("team %s: %w", name, stateerr.ErrNotFound)
	}
	if name == command.DefaultTeam {
		return fmt.Errorf("team %s always exists: %w", name, stateerr.ErrConflict)
	}
	if err := inUse(); err != nil {
		return err
	}
	delete(t.m, name)
	return nil
}
