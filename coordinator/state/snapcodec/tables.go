package snapcodec

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// Tables is the replicated state as a capture holds it, what Encode
// writes: the tables that grow with the jobs kept are frozen copy-on-write
// tables (package cow), the others lists in no order (Encode sorts what
// it writes, on copies where it must).
type Tables struct {
	BootstrapGeneration int
	Seq                 uint64
	// AuditSeq is the number of the last audit event ever appended.
	AuditSeq uint64

	Credentials []creds.Credential
	Workers     []record.Worker
	Jobs        cow.Frozen[*record.Job]
	// JobOrder is the jobs' ids in the order they were submitted: the
	// order a snapshot writes them in.
	JobOrder    []string
	Tasks       cow.Frozen[*record.Task]
	Groups      []groups.Group
	Teams       []teams.Team
	Usage       []usage.Row
	UsageTotals []usage.Total
	Clusters    []enroll.Cluster
	Enrollments []enroll.Enrollment
	Artifacts   []artifacts.Artifact

	// Submissions are the remembered finishes, by task id, "/" and
	// submission id.
	Submissions cow.Frozen[*record.Submission]
	Idempotency cow.Frozen[string]
	Nodes       map[string]string
	// Audit is the retained audit log and Refusals the refusal ring,
	// each oldest first.
	Audit    []command.AuditEvent
	Refusals []command.AuditEvent
}
