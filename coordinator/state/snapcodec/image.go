package snapcodec

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// Image is a snapshot decoded: every record it holds, as the state's load
// takes them to check and index. It is also the whole store as version 1
// snapshots wrote it, one JSON document, which Decode still reads.
type Image struct {
	Version             int                          `json:"version"`
	BootstrapGeneration int                          `json:"bootstrap_generation"`
	Seq                 uint64                       `json:"seq"`
	Credentials         []*creds.Credential          `json:"credentials"`
	Workers             []*record.Worker             `json:"workers"`
	Jobs                []*record.Job                `json:"jobs"`
	Tasks               []*record.Task               `json:"tasks"`
	Submissions         map[string]record.Submission `json:"submissions"`
	Idempotency         map[string]string            `json:"idempotency"`
	Nodes               map[string]string            `json:"nodes"`
	Groups              []*groups.Group              `json:"groups,omitempty"`
	Teams               []*teams.Team                `json:"teams,omitempty"`
	Usage               []*usage.Row                 `json:"usage,omitempty"`
	UsageTotals         []*usage.Total               `json:"usage_totals,omitempty"`
	Clusters            []*enroll.Cluster            `json:"clusters,omitempty"`
	Enrollments         []*enroll.Enrollment         `json:"enrollments,omitempty"`
	Artifacts           []*artifacts.Artifact        `json:"artifacts,omitempty"`
	// Audit is the retained audit log, oldest first; AuditRefusals the
	// refusal ring (package audit), oldest first; AuditSeq the number of the
	// last event ever appended to either.
	Audit         []command.AuditEvent `json:"audit,omitempty"`
	AuditRefusals []command.AuditEvent `json:"audit_refusals,omitempty"`
	AuditSeq      uint64               `json:"audit_seq,omitempty"`

	// Finishes are version 3's remembered finishes that name their task
	// (RecFinish), by key; never in JSON.
	Finishes map[string]Finish `json:"-"`
}

// hasSubmission reports whether a remembered finish under key was
// decoded already, in either form.
func (snap *Image) hasSubmission(key string) bool {
	_, a := snap.Submissions[key]
	_, b := snap.Finishes[key]
	return a || b
}

// addFinish adds a finish record to snap.
func (snap *Image) addFinish(x Finish) error {
	if snap.Version < 3 {
		return fmt.Errorf("a finish record in a version %d snapshot: %w", snap.Version, stateerr.ErrInvalid)
	}
	key := x.Task + "/" + x.Submission
	if x.Task == "" || snap.hasSubmission(key) {
		return fmt.Errorf("finish %q listed twice or without its task: %w", key, stateerr.ErrInvalid)
	}
	snap.Finishes[key] = x
	return nil
}

// addAudit adds an audit event or a refusal to snap.
func (snap *Image) addAudit(kind uint8, ev command.AuditEvent) {
	if kind == RecAudit {
		snap.Audit = append(snap.Audit, ev)
	} else {
		snap.AuditRefusals = append(snap.AuditRefusals, ev)
	}
}

// addPair adds an idempotency key or a node to snap.
func (snap *Image) addPair(kind uint8, p Pair) error {
	m := snap.Idempotency
	if kind == RecNode {
		m = snap.Nodes
	}
	if _, dup := m[p.Key]; dup {
		return fmt.Errorf("key %q listed twice: %w", p.Key, stateerr.ErrInvalid)
	}
	m[p.Key] = p.Value
	return nil
}
