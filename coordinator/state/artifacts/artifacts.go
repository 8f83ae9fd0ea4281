// Package artifacts is the artifact records' room: the replicated record
// of each content-addressed blob (its size, the coordinators holding its
// bytes, who uploaded it, the teams that may read it, the team its quota
// is charged to), the rules of granting, charging and proving, and the
// collection of what no job names. The bytes never enter the state: they
// live in the data dirs of the holders. The state applies the artifact
// commands through it, says which digests its jobs name and audits. It
// knows no other room but the state's value types and sentinel errors.
package artifacts

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// Artifact is the replicated record of a content-addressed blob. The bytes
// live in the data dirs of the coordinators listed in Holders, never in
// Raft.
type Artifact struct {
	Digest     string    `json:"digest"`
	Size       int64     `json:"size"`
	UploadedBy string    `json:"uploaded_by,omitempty"`
	UploadedAt time.Time `json:"uploaded_at"`
	Holders    []string  `json:"holders"`
	// TouchedAt is when it was last put again (zero: never); garbage
	// collection counts an artifact's age from the later of the two.
	TouchedAt time.Time `json:"touched_at,omitzero"`
	// Teams are the teams whose clients may read it, sorted: those that
	// uploaded it and those whose jobs' finishes list it. Scoped marks a
	// record that keeps them; one from before teams is default's until a
	// team is granted it, when default is kept among its teams.
	Teams  []string `json:"teams,omitempty"`
	Scoped bool     `json:"scoped,omitempty"`
	// Workers are the workers that uploaded its bytes, sorted: a
	// worker's finish may name an artifact only if it is among them or
	// the job's team may read it already (Proves), so that naming a
	// digest never hands a team bytes it was not given.
	Workers []string `json:"workers,omitempty"`
	// ChargedTeam is the team whose artifact quota counts it (empty:
	// none; quota.go).
	ChargedTeam string `json:"charged_team,omitempty"`
}

// grantTeam lets a team's clients read the artifact.
func (a *Artifact) grantTeam(team string) {
	if team == "" {
		return
	}
	if !a.Scoped { // from before teams: default keeps reading it
		a.Scoped = true
		a.grantTeam(command.DefaultTeam)
	}
	if i, ok := slices.BinarySearch(a.Teams, team); !ok {
		a.Teams = slices.Insert(a.Teams, i, team)
	}
}

// ReadableBy reports whether a team's clients may read the artifact.
func (a *Artifact) ReadableBy(team string) bool {
	if !a.Scoped {
		return team == command.DefaultTeam
	}
	_, ok := slices.BinarySearch(a.Teams, team)
	return ok
}

// lastPut is when the artifact was last uploaded.
func (a *Artifact) lastPut() time.Time {
	if a.TouchedAt.After(a.UploadedAt) {
		return a.TouchedAt
	}
	return a.UploadedAt
}

// Clone is a copy of a that shares none of its slices.
func (a *Artifact) Clone() Artifact {
	out := *a
	out.Holders = slices.Clone(a.Holders)
	out.Teams = slices.Clone(a.Teams)
	out.Workers = slices.Clone(a.Workers)
	return out
}

// Outcome is the outcome of RecordArtifact and SetArtifactHolder: the
// record, and whether this command created it.
type Outcome struct {
	Created  bool
	Artifact Artifact
}

// Table is every artifact record, by digest. It follows its owner's
// locking: writes under the write lock (inside Apply), reads under the
// read lock.
type Table struct{ m map[string]*Artifact }

// New returns an empty table.
func New() *Table { return &Table{m: map[string]*Artifact{}} }

// Restore returns a table of list, as a snapshot lists it.
func Restore(list []*Artifact) (*Table, error) {
	t := New()
	for _, a := range list {
		if a == nil {
			return nil, fmt.Errorf("empty artifact: %w", stateerr.ErrInvalid)
		}
		t.m[a.Digest] = a
	}
	return t, nil
}

// Record records an upload (c): a new record, or a known digest of the
// same size touched, granted to c's team and listing c's worker and
// holders. nodes are the holders c named, its own node first.
func (t *Table) Record(c command.RecordArtifact) (out Outcome, nodes []string, err error) {
	a, ok := t.m[c.Digest]
	if ok && a.Size != c.Size {
		return Outcome{}, nil, fmt.Errorf("artifact %s was recorded with %d bytes, not %d: %w", c.Digest, a.Size, c.Size, stateerr.ErrConflict)
	}
	if !ok {
		a = &Artifact{Digest: c.Digest, Size: c.Size, UploadedBy: c.By, UploadedAt: c.Now, Scoped: c.Scoped, ChargedTeam: c.ChargeTeam}
		t.m[c.Digest] = a
	} else if c.Touch {
		a.TouchedAt = c.Now
	}
	a.grantTeam(c.Team)
	if i, ok := slices.BinarySearch(a.Workers, c.WorkerID); c.WorkerID != "" && !ok {
		a.Workers = slices.Insert(a.Workers, i, c.WorkerID)
	}
	nodes = c.Holders
	if c.NodeID != "" && !slices.Contains(nodes, c.NodeID) {
		nodes = append([]string{c.NodeID}, nodes...)
	}
	for _, n := range nodes {
		if i, held := slices.BinarySearch(a.Holders, n); !held {
			a.Holders = slices.Insert(a.Holders, i, n)
		}
	}
	return Outcome{Created: !ok, Artifact: a.Clone()}, nodes, nil
}

// SetHolder adds a coordinator to, or drops it from, the holders of a
// recorded artifact (c). A holder is added only with the record's size
// (what the coordinator verified); a digest without a record is refused,
// never created. changed is false when the holder was listed already, or
// not listed to drop; kind is the audit event's kind.
func (t *Table) SetHolder(c command.SetArtifactHolder) (out Outcome, kind string, changed bool, err error) {
	if c.NodeID == "" {
		return Outcome{}, "", false, fmt.Errorf("%w: artifact holder: no node id", stateerr.ErrInvalid)
	}
	a, ok := t.m[c.Digest]
	if !ok {
		return Outcome{}, "", false, fmt.Errorf("no artifact %s: %w", c.Digest, stateerr.ErrNotFound)
	}
	if c.Held && a.Size != c.Size {
		return Outcome{}, "", false, fmt.Errorf("artifact %s was recorded with %d bytes, not %d: %w", c.Digest, a.Size, c.Size, stateerr.ErrConflict)
	}
	i := slices.Index(a.Holders, c.NodeID)
	kind = "artifact.holder_added"
	switch {
	case c.Held && i < 0:
		// A new array each time: the old one may be shared with a copy.
		at, _ := slices.BinarySearch(a.Holders, c.NodeID)
		a.Holders = slices.Insert(slices.Clone(a.Holders), at, c.NodeID)
	case !c.Held && i >= 0:
		a.Holders = slices.Delete(slices.Clone(a.Holders), i, i+1)
		kind = "artifact.holder_dropped"
	default:
		return Outcome{Artifact: a.Clone()}, "", false, nil
	}
	return Outcome{Artifact: a.Clone()}, kind, true, nil
}

// Get returns a copy of digest's record.
func (t *Table) Get(digest string) (Artifact, bool) {
	a, ok := t.m[digest]
	if !ok {
		return Artifact{}, false
	}
	return a.Clone(), true
}

// Has reports whether digest has a record.
func (t *Table) Has(digest string) bool { _, ok := t.m[digest]; return ok }

// ReadableBy reports whether a team's clients may read a recorded
// artifact (false for one not recorded).
func (t *Table) ReadableBy(digest, team string) bool {
	a, ok := t.m[digest]
	return ok && a.ReadableBy(team)
}

// Where lists a copy of each record keep accepts, in digest order.
func (t *Table) Where(keep func(*Artifact) bool) []Artifact {
	var out []Artifact
	for _, a := range t.m {
		if keep(a) {
			out = append(out, a.Clone())
		}
	}
	slices.SortFunc(out, func(x, y Artifact) int { return strings.Compare(x.Digest, y.Digest) })
	return out
}

// HeldCount is how many records list node among their holders.
func (t *Table) HeldCount(node string) int {
	n := 0
	for _, a := range t.m {
		if slices.Contains(a.Holders, node) {
			n++
		}
	}
	return n
}

// CheckRecorded refuses artifacts of which one has no record, or whose
// sizes do not match their records.
func (t *Table) CheckRecorded(arts []command.TaskArtifact) error {
	for _, a := range arts {
		rec, ok := t.m[a.SHA256]
		switch {
		case !ok:
			return fmt.Errorf("%w: artifacts: %s has not been uploaded (upload it before the finish)", stateerr.ErrInvalid, a.SHA256)
		case a.Path != "" && rec.Size != a.Size: // a bare digest has no size
			return fmt.Errorf("%w: artifacts: %s is %d bytes, not %d", stateerr.ErrInvalid, a.SHA256, rec.Size, a.Size)
		}
	}
	return nil
}

// Proves refuses an artifact a worker names (recorded: CheckRecorded
// passed) that team may not read yet and the worker never uploaded the
// bytes of: a report naming a digest must not be how a team reads
// another's artifact.
func (t *Table) Proves(arts []command.TaskArtifact, team, workerID string) error {
	for _, x := range arts {
		a, ok := t.m[x.SHA256]
		if !ok || a.ReadableBy(team) {
			continue
		}
		if _, up := slices.BinarySearch(a.Workers, workerID); !up {
			return fmt.Errorf("%w: artifacts: %s was not uploaded by worker %s", stateerr.ErrInvalid, x.SHA256, workerID)
		}
	}
	return nil
}

// Collect removes the records that named does not hold and that were
// last put at or before cutoff, up to limit (0: no limit), in digest
// order. It reports how many it removed and whether more were due.
func (t *Table) Collect(named map[string]bool, cutoff time.Time, limit int) (int, bool) {
	var due []string
	for d, a := range t.m {
		if !named[d] && !a.lastPut().After(cutoff) {
			due = append(due, d)
		}
	}
	slices.Sort(due)
	more := false
	if limit > 0 && len(due) > limit {
		due, more = due[:limit], true
	}
	for _, d := range due {
		delete(t.m, d)
	}
	return len(due), more
}

// AppendTo appends a copy of every record to dst, in no set order (a
// snapshot's capture sorts them).
func (t *Table) AppendTo(dst []Artifact) []Artifact {
	for _, a := range t.m {
		dst = append(dst, a.Clone())
	}
	return dst
}

// Len is how many records there are.
func (t *Table) Len() int { return len(t.m) }
