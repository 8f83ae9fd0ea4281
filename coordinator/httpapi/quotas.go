package httpapi

import (
	"errors"
	"math"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Quotas bound what one client (a client token's name) may hold in the
// replicated state. A zero field takes the default; a negative one turns
// that quota off.
type Quotas struct {
	// MaxPendingJobs is how many of one client's jobs may exist that have
	// not ended (any task pending, assigned or running). Decided inside
	// the state machine, so concurrent submissions cannot both take the
	// last slot.
	MaxPendingJobs int
	// MaxJobBytes bounds one job spec as JSON (every submitted field).
	MaxJobBytes int
	// MaxOutputBytes bounds the task output all jobs together keep on
	// every coordinator (each task is also bounded by
	// state.MaxLogBytesPerTask). Past it, a task's further output is
	// dropped after one marker line. Carried in each AppendLogs command,
	// so the leader's flag is the one every replica applies.
	MaxOutputBytes int
	// MaxArtifactBytes bounds the artifacts each credential uploaded
	// first (artifactquota.go); negative: no bound.
	MaxArtifactBytes int64
}

// Default quotas. A job spec is small (an executor, a config, a few
// inputs): 1 MiB leaves room for large configs while keeping 1,000 jobs
// of one client under a gigabyte of state on every coordinator.
const (
	DefaultMaxPendingJobs = 1000
	DefaultMaxJobBytes    = 1 << 20
	// DefaultMaxOutputBytes: 4 GiB of task output, about 500 tasks at
	// their 8 MiB bound, on each coordinator's disk.
	DefaultMaxOutputBytes = min(4<<30, math.MaxInt)
)

// pendingQuotaRetry is the Retry-After of a refusal over the pending-jobs
// quota: a slot frees when one of the client's jobs ends.
const pendingQuotaRetry = 10

func (q Quotas) withDefaults() Quotas {
	q.MaxPendingJobs = orDefaultInt(q.MaxPendingJobs, DefaultMaxPendingJobs)
	q.MaxJobBytes = orDefaultInt(q.MaxJobBytes, DefaultMaxJobBytes)
	q.MaxOutputBytes = orDefaultInt(q.MaxOutputBytes, DefaultMaxOutputBytes)
	if q.MaxArtifactBytes == 0 {
		q.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	return q
}

// pendingLimit is the limit the SubmitJob command carries (0: none).
func (q Quotas) pendingLimit() int { return max(q.MaxPendingJobs, 0) }

// outputLimit is the bound the AppendLogs command carries (0: none).
func (q Quotas) outputLimit() int { return max(q.MaxOutputBytes, 0) }

// checkJobSize refuses a spec whose encoding (size bytes) is larger than
// the job-size quota.
func (q Quotas) checkJobSize(size int) error {
	if q.MaxJobBytes >= 0 && size > q.MaxJobBytes {
		return invalidf("job: %d bytes of submitted fields, at most %d", size, q.MaxJobBytes)
	}
	return nil
}

// quotaRefusal turns the state machine's quota refusal into 429.
func quotaRefusal(err error) error {
	if errors.Is(err, state.ErrQuotaExceeded) {
		return &apiError{code: api.CodeRateLimited, msg: err.Error() + "; retry once one ends", retryAfter: pendingQuotaRetry}
	}
	return err
}
