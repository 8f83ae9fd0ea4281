package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
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
	// the job's team may read it already (checkProof), so that naming a
	// digest never hands a team bytes it was not given.
	Workers []string `json:"workers,omitempty"`
	// ChargedTeam is the team whose artifact quota counts it (empty:
	// none; teamartifacts.go).
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

// readableBy reports whether a team's clients may read the artifact.
func (a *Artifact) readableBy(team string) bool {
	if !a.Scoped {
		return team == command.DefaultTeam
	}
	_, ok := slices.BinarySearch(a.Teams, team)
	return ok
}

// ArtifactReadableBy reports whether a team's clients may read a recorded
// artifact (false for one not recorded).
func (s *Store) ArtifactReadableBy(digest, team string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.artifacts[digest]
	return ok && a.readableBy(team)
}

// lastPut is when the artifact was last uploaded.
func (a *Artifact) lastPut() time.Time {
	if a.TouchedAt.After(a.UploadedAt) {
		return a.TouchedAt
	}
	return a.UploadedAt
}

// ArtifactOutcome is the outcome of RecordArtifact: the record, and
// whether this command created it (else it added holders).
type ArtifactOutcome struct {
	Created  bool
	Artifact Artifact
}

func (s *Store) recordArtifact(c command.RecordArtifact) (ArtifactOutcome, error) {
	a, ok := s.artifacts[c.Digest]
	if ok && a.Size != c.Size {
		return ArtifactOutcome{}, fmt.Errorf("artifact %s was recorded with %d bytes, not %d: %w", c.Digest, a.Size, c.Size, ErrConflict)
	}
	if !ok {
		a = &Artifact{Digest: c.Digest, Size: c.Size, UploadedBy: c.By, UploadedAt: c.Now, Scoped: c.Scoped, ChargedTeam: c.ChargeTeam}
		s.artifacts[c.Digest] = a
	} else if c.Touch {
		a.TouchedAt = c.Now
	}
	a.grantTeam(c.Team)
	if i, ok := slices.BinarySearch(a.Workers, c.WorkerID); c.WorkerID != "" && !ok {
		a.Workers = slices.Insert(a.Workers, i, c.WorkerID)
	}
	nodes := c.Holders
	if c.NodeID != "" && !slices.Contains(nodes, c.NodeID) {
		nodes = append([]string{c.NodeID}, nodes...)
	}
	for _, n := range nodes {
		if i, held := slices.BinarySearch(a.Holders, n); !held {
			a.Holders = slices.Insert(a.Holders, i, n)
		}
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "artifact.stored", Actor: c.By, Subject: c.Digest, Source: c.Source, Detail: fmt.Sprintf("%d bytes on %s", c.Size, strings.Join(nodes, ","))})
	return ArtifactOutcome{Created: !ok, Artifact: a.clone()}, nil
}

// setArtifactHolder adds a coordinator to, or drops it from, the holders
// of a recorded artifact. A holder is added only with the record's size
// (what the coordinator verified); a digest without a record is refused,
// never created. Adding a holder listed already, or dropping one that is
// not, changes nothing and records no event.
func (s *Store) setArtifactHolder(c command.SetArtifactHolder) (ArtifactOutcome, error) {
	if c.NodeID == "" {
		return ArtifactOutcome{}, fmt.Errorf("%w: artifact holder: no node id", ErrInvalid)
	}
	a, ok := s.artifacts[c.Digest]
	if !ok {
		return ArtifactOutcome{}, fmt.Errorf("no artifact %s: %w", c.Digest, ErrNotFound)
	}
	if c.Held && a.Size != c.Size {
		return ArtifactOutcome{}, fmt.Errorf("artifact %s was recorded with %d bytes, not %d: %w", c.Digest, a.Size, c.Size, ErrConflict)
	}
	i := slices.Index(a.Holders, c.NodeID)
	kind := "artifact.holder_added"
	switch {
	case c.Held && i < 0:
		// A new array each time: the old one may be shared with a copy.
		at, _ := slices.BinarySearch(a.Holders, c.NodeID)
		a.Holders = slices.Insert(slices.Clone(a.Holders), at, c.NodeID)
	case !c.Held && i >= 0:
		a.Holders = slices.Delete(slices.Clone(a.Holders), i, i+1)
		kind = "artifact.holder_dropped"
	default:
		return ArtifactOutcome{Artifact: a.clone()}, nil
	}
	detail := c.NodeID
	if c.Reason != "" {
		detail += ": " + c.Reason
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, Subject: c.Digest, Detail: detail})
	return ArtifactOutcome{Artifact: a.clone()}, nil
}

// ArtifactRecords returns every artifact record, in digest order.
func (s *Store) ArtifactRecords() []Artifact {
	return s.artifactsWhere(func(*Artifact) bool { return true })
}

// ArtifactsHeldBy returns the records that list node among their
// holders, in digest order.
func (s *Store) ArtifactsHeldBy(node string) []Artifact {
	return s.artifactsWhere(func(a *Artifact) bool { return slices.Contains(a.Holders, node) })
}

// ArtifactsHeldCount is how many records list node among their holders.
func (s *Store) ArtifactsHeldCount(node string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, a := range s.artifacts {
		if slices.Contains(a.Holders, node) {
			n++
		}
	}
	return n
}

func (s *Store) artifactsWhere(keep func(*Artifact) bool) []Artifact {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Artifact
	for _, a := range s.artifacts {
		if keep(a) {
			out = append(out, a.clone())
		}
	}
	slices.SortFunc(out, func(x, y Artifact) int { return strings.Compare(x.Digest, y.Digest) })
	return out
}

// Artifact returns the record of a digest.
func (s *Store) Artifact(digest string) (Artifact, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.artifacts[digest]
	if !ok {
		return Artifact{}, false
	}
	return a.clone(), true
}

// HasArtifact reports whether digest has a record.
func (s *Store) HasArtifact(digest string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.artifacts[digest]
	return ok
}

// WorkerHoldsInput reports whether worker holds (assigned or running) a
// task whose job lists digest among its inputs, or whose latest
// checkpoint it is (checkpoint.go): the only artifacts a worker may read.
func (s *Store) WorkerHoldsInput(workerID, digest string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workerHolds(workerID, func(spec *command.JobSpec) bool {
		return slices.ContainsFunc(spec.Inputs, func(r command.ArtifactRef) bool { return r.SHA256 == digest })
	}) || s.workerHoldsCheckpoint(workerID, digest)
}

// WorkerMayUpload reports whether worker holds (assigned or running) a
// task whose job declares outputs or a checkpoint: the only time a
// worker may upload.
func (s *Store) WorkerMayUpload(workerID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.workerHolds(workerID, func(spec *command.JobSpec) bool { return len(spec.Outputs) > 0 || spec.Checkpoint != nil })
}

// workerHolds reports whether a live worker holds a task whose job's spec
// satisfies ok; mu must be held.
func (s *Store) workerHolds(workerID string, ok func(*command.JobSpec) bool) bool {
	w, found := s.workers[workerID]
	if !found || w.Status == workerRevoked {
		return false
	}
	for id := range w.active {
		if ok(&s.jobs.Get(s.tasks.Get(id).JobID).Spec) {
			return true
		}
	}
	return false
}

// checkRecorded refuses artifacts of which one has no record, or whose
// sizes do not match their records.
func (s *Store) checkRecorded(arts []command.TaskArtifact) error {
	for _, a := range arts {
		rec, ok := s.artifacts[a.SHA256]
		switch {
		case !ok:
			return fmt.Errorf("%w: artifacts: %s has not been uploaded (upload it before the finish)", ErrInvalid, a.SHA256)
		case a.Path != "" && rec.Size != a.Size: // a bare digest has no size
			return fmt.Errorf("%w: artifacts: %s is %d bytes, not %d", ErrInvalid, a.SHA256, rec.Size, a.Size)
		}
	}
	return nil
}

// checkProof refuses, for a finish or fail that asks for it, an artifact
// the worker names (recorded: checkRecorded passed) that the job's team
// may not read yet and the worker never uploaded the bytes of: a report
// naming a digest must not be how a team reads another's artifact.
func (s *Store) checkProof(require bool, t *Task, workerID string, arts []command.TaskArtifact) error {
	if !require {
		return nil
	}
	team := command.TeamOf(s.jobs.Get(t.JobID).Team)
	for _, x := range arts {
		a, ok := s.artifacts[x.SHA256]
		if !ok || a.readableBy(team) {
			continue
		}
		if _, up := slices.BinarySearch(a.Workers, workerID); !up {
			return fmt.Errorf("%w: artifacts: %s was not uploaded by worker %s", ErrInvalid, x.SHA256, workerID)
		}
	}
	return nil
}
