package state

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// snapshotV1 is the serialised form of the whole store.
type snapshotV1 struct {
	Version             int                   `json:"version"`
	BootstrapGeneration int                   `json:"bootstrap_generation"`
	Seq                 uint64                `json:"seq"`
	Credentials         []*Credential         `json:"credentials"`
	Workers             []*Worker             `json:"workers"`
	Jobs                []*Job                `json:"jobs"`
	Tasks               []*Task               `json:"tasks"`
	Submissions         map[string]Submission `json:"submissions"`
	Idempotency         map[string]string     `json:"idempotency"`
	Nodes               map[string]string     `json:"nodes"`
	Groups              []*Group              `json:"groups,omitempty"`
	Clusters            []*Cluster            `json:"clusters,omitempty"`
	Enrollments         []*Enrollment         `json:"enrollments,omitempty"`
	Artifacts           []*Artifact           `json:"artifacts,omitempty"`
	// Audit is the retained audit log, oldest first; AuditRefusals the
	// refusal ring (see audit.go), oldest first; AuditSeq the number of the
	// last event ever appended to either.
	Audit         []command.AuditEvent `json:"audit,omitempty"`
	AuditRefusals []command.AuditEvent `json:"audit_refusals,omitempty"`
	AuditSeq      uint64               `json:"audit_seq,omitempty"`
}

// Snapshot writes the whole state to w. Output is deterministic for a given
// state.
func (s *Store) Snapshot(w io.Writer) error {
	s.mu.RLock()
	snap := snapshotV1{
		Version:             1,
		BootstrapGeneration: s.bootstrapGeneration,
		Seq:                 s.seq,
		Submissions:         s.submissions,
		Idempotency:         s.idempotency,
		Nodes:               s.nodes,
		Audit:               s.audit,
		AuditRefusals:       s.refusals,
		AuditSeq:            s.auditSeq,
	}
	for _, c := range s.credentials {
		snap.Credentials = append(snap.Credentials, c)
	}
	sort.Slice(snap.Credentials, func(i, j int) bool { return snap.Credentials[i].ID < snap.Credentials[j].ID })
	for _, w := range s.workers {
		snap.Workers = append(snap.Workers, w)
	}
	sort.Slice(snap.Workers, func(i, j int) bool { return snap.Workers[i].ID < snap.Workers[j].ID })
	for _, id := range s.jobOrder {
		snap.Jobs = append(snap.Jobs, s.jobs[id])
	}
	for _, t := range s.tasks {
		snap.Tasks = append(snap.Tasks, t)
	}
	sort.Slice(snap.Tasks, func(i, j int) bool {
		a, b := snap.Tasks[i], snap.Tasks[j]
		return a.Seq < b.Seq || (a.Seq == b.Seq && a.ID < b.ID) // ties only in a crafted snapshot
	})
	for _, g := range s.groups {
		snap.Groups = append(snap.Groups, g)
	}
	sort.Slice(snap.Groups, func(i, j int) bool { return snap.Groups[i].ID < snap.Groups[j].ID })
	for _, c := range s.clusters {
		snap.Clusters = append(snap.Clusters, c)
	}
	sort.Slice(snap.Clusters, func(i, j int) bool { return snap.Clusters[i].Key < snap.Clusters[j].Key })
	for _, k := range s.sortedEnrollmentKeys() {
		snap.Enrollments = append(snap.Enrollments, s.enrollments[k])
	}
	for _, a := range s.artifacts {
		snap.Artifacts = append(snap.Artifacts, a)
	}
	sort.Slice(snap.Artifacts, func(i, j int) bool { return snap.Artifacts[i].Digest < snap.Artifacts[j].Digest })
	err := json.NewEncoder(w).Encode(&snap)
	s.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// Restore replaces the state with a snapshot and rebuilds every index.
// The snapshot is decoded, checked and indexed into fresh tables first;
// only a snapshot that passes replaces the state, so one that fails to
// decode or validate leaves the previous state untouched.
func (s *Store) Restore(r io.Reader) error {
	var snap snapshotV1
	if err := json.NewDecoder(r).Decode(&snap); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if snap.Version != 1 {
		return fmt.Errorf("restore: snapshot version %d: %w", snap.Version, ErrInvalid)
	}
	scratch := &Store{}
	scratch.reset()
	if err := scratch.load(&snap); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables = scratch.tables
	s.markPending()
	s.wake()
	return nil
}

// load fills empty tables from a decoded snapshot, refusing one whose
// records contradict each other (ErrInvalid).
func (s *Store) load(snap *snapshotV1) error {
	s.bootstrapGeneration = snap.BootstrapGeneration
	s.seq = snap.Seq
	for _, c := range snap.Credentials {
		if c == nil || s.credentials[c.ID] != nil {
			return fmt.Errorf("credential listed twice or empty: %w", ErrInvalid)
		}
		s.credentials[c.ID] = c
	}
	for _, w := range snap.Workers {
		if w == nil || s.workers[w.ID] != nil {
			return fmt.Errorf("worker listed twice or empty: %w", ErrInvalid)
		}
		w.active = map[string]struct{}{}
		s.workers[w.ID] = w
	}
	for _, g := range snap.Groups {
		if g == nil || s.groups[g.ID] != nil {
			return fmt.Errorf("group listed twice or empty: %w", ErrInvalid)
		}
		if g.Members == nil {
			g.Members = []command.GroupMember{}
		}
		s.groups[g.ID] = g
	}
	s.reindexGroups()
	for _, c := range snap.Clusters {
		if c == nil {
			return fmt.Errorf("empty cluster: %w", ErrInvalid)
		}
		p, err := parsePrefixes(c.CIDRs)
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.Key, err)
		}
		c.prefixes = p
		s.clusters[c.Key] = c
	}
	for _, e := range snap.Enrollments {
		if e == nil {
			return fmt.Errorf("empty enrollment: %w", ErrInvalid)
		}
		s.enrollments[e.Key] = e
	}
	for _, a := range snap.Artifacts {
		if a == nil {
			return fmt.Errorf("empty artifact: %w", ErrInvalid)
		}
		s.artifacts[a.Digest] = a
	}
	s.audit, s.refusals = splitAudit(snap.Audit, snap.AuditRefusals)
	s.auditSeq = snap.AuditSeq
	for _, j := range snap.Jobs {
		if j == nil || s.jobs[j.ID] != nil {
			return fmt.Errorf("job listed twice or empty: %w", ErrInvalid)
		}
		j.rules = rulesOf(j.Spec)
		s.jobs[j.ID] = j
		s.jobOrder = append(s.jobOrder, j.ID)
	}
	for _, t := range snap.Tasks {
		if t == nil || s.tasks[t.ID] != nil {
			return fmt.Errorf("task listed twice or empty: %w", ErrInvalid)
		}
		j := s.jobs[t.JobID]
		if j == nil {
			return fmt.Errorf("task %s of job %s, which the snapshot lacks: %w", t.ID, t.JobID, ErrInvalid)
		}
		s.tasks[t.ID] = t
		switch {
		case t.State == "pending":
			s.queue.push(keyOf(j.Spec), j.Spec.Priority, t)
		case t.Active():
			if w, ok := s.workers[t.WorkerID]; ok {
				w.active[t.ID] = struct{}{}
			}
		}
	}
	for key, sub := range snap.Submissions {
		if sub.Task.ID == "" || !strings.HasPrefix(key, sub.Task.ID+"/") {
			return fmt.Errorf("submission %q without the task it finished: %w", key, ErrInvalid)
		}
	}
	if snap.Submissions != nil {
		s.submissions = snap.Submissions
	}
	if snap.Idempotency != nil {
		s.idempotency = snap.Idempotency
	}
	if snap.Nodes != nil {
		s.nodes = snap.Nodes
	}
	return nil
}
