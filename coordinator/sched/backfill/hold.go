package backfill

import (
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Hold is the head task's hold: the devices it holds as they free up.
type Hold struct {
	JobID   string
	GPUs    int // the GPUs it holds
	Devices map[string]bool
	// Until is when the last held GPU is expected free; Known is false
	// when some holder has no timeout.
	Until time.Time
	Known bool
}

// Of is the hold chosen slots make for job jobID, holding gpus GPUs.
func Of(jobID string, gpus int, chosen []Slot) *Hold {
	h := &Hold{JobID: jobID, GPUs: gpus, Devices: map[string]bool{}, Known: true}
	for _, sl := range chosen {
		for _, d := range sl.Devices {
			h.Devices[d] = true
		}
		h.Known = h.Known && !sl.Unknown
		if sl.At.After(h.Until) {
			h.Until = sl.At
		}
	}
	return h
}

// Spares reports whether a task of j may take held GPUs at now: there is
// no hold, j is the holder, or j's timeout ends before they are needed.
func (h *Hold) Spares(j *record.Job, now time.Time) bool {
	if h == nil || h.JobID == j.ID {
		return true
	}
	to := j.Spec.TimeoutSeconds
	return h.Known && to > 0 && !now.Add(time.Duration(to)*time.Second).After(h.Until)
}

// Large reports whether spec's tasks need more than one whole GPU
// together: only such a head holds GPUs.
func Large(spec command.JobSpec) bool {
	r := spec.Resources
	if r == nil || r.GPUs == 0 || r.Partial() {
		return false
	}
	if spec.Gang {
		return spec.Count*r.GPUs > 1
	}
	return r.GPUs > 1
}

// Reason names the hold a task waits behind, its job as named, for a
// pending task's reason.
func (h *Hold) Reason(named string) string {
	when := "a holder without timeout_seconds ends"
	if h.Known {
		when = h.Until.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("GPUs held for %s (%d GPUs, at the head of the order) until %s; a task whose timeout_seconds ends before then may use them", named, h.GPUs, when)
}
