package fit

import (
	"fmt"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// Shortfalls: why no live worker could take a task even with every GPU
// free, as a pending task's reason says it. Each is "" when some worker
// could; the state asks them after the cheaper reasons (a target with no
// live worker, a rule no worker meets).

// GangShortfall says when the live workers could not hold a whole gang
// at once even with every GPU and slot free, or "".
func GangShortfall(cands []*record.Worker, spec command.JobSpec) string {
	room := 0
	for _, w := range cands {
		n := spec.Count
		if r := spec.Resources; r != nil && r.GPUs > 0 {
			healthy := 0
			for _, d := range w.Devices {
				if Offered(w, d) && DeviceFits(d, r) {
					healthy++
				}
			}
			n = min(n, healthy/r.GPUs)
		}
		if w.MaxTasks > 0 {
			n = min(n, w.MaxTasks)
		}
		if spec.MaxPerWorker > 0 {
			n = min(n, spec.MaxPerWorker)
		}
		if spec.ExclusiveWorker {
			n = min(n, 1)
		}
		room += n
		if room >= spec.Count {
			return ""
		}
	}
	return fmt.Sprintf("a gang of %d placed whole; the live workers can hold at most %d of its tasks at once", spec.Count, room)
}

// GPUShortfall says why none of cands has enough GPUs that fit r, with
// every GPU free, or "" when one has.
func GPUShortfall(cands []*record.Worker, r *command.Resources) string {
	if r == nil || r.GPUs == 0 {
		return ""
	}
	if r.Shared() {
		return shareShortfall(cands, r)
	}
	most, mostHealthy := 0, 0
	for _, w := range cands {
		fitting, healthy := 0, 0
		for _, d := range w.Devices {
			if DeviceFits(d, r) {
				fitting++
				if Offered(w, d) {
					healthy++
				}
			}
		}
		if healthy >= r.GPUs {
			return ""
		}
		most, mostHealthy = max(most, fitting), max(mostHealthy, healthy)
	}
	need := fmt.Sprintf("needs %d GPUs%s", r.GPUs, gpuTerms(r))
	if most < r.GPUs {
		return fmt.Sprintf("%s; the most any live worker has is %d", need, most)
	}
	return fmt.Sprintf("%s; the most any live worker has healthy now is %d", need, mostHealthy)
}

// shareShortfall says why no GPU of cands could take r's share even with
// nothing on it, or "" when one could.
func shareShortfall(cands []*record.Worker, r *command.Resources) string {
	fits := false
	for _, w := range cands {
		for _, d := range w.Devices {
			if ShareFits(d, r, 0) {
				if Offered(w, d) {
					return ""
				}
				fits = true
			}
		}
	}
	terms := *r
	terms.GPUMemoryMiB = 0
	need := fmt.Sprintf("needs a share of %d MiB of one GPU", r.GPUMemoryMiB)
	if r.GPUSharing == command.SharingEnforced {
		need += " that enforces it (MPS)"
	}
	need += gpuTerms(&terms)
	if fits {
		return need + "; no live worker has one healthy now"
	}
	return need + "; no live worker has such a GPU"
}

// gpuTerms spells out a request's GPU constraints: " (model h100, at
// least 40960 MiB, compute capability 9.0 or more)".
func gpuTerms(r *command.Resources) string {
	var terms []string
	if r.MIGProfile != "" {
		terms = append(terms, "MIG devices of profile "+r.MIGProfile)
	}
	if r.GPUModel != "" {
		terms = append(terms, "model "+r.GPUModel)
	}
	if r.GPUMemoryMiB > 0 {
		terms = append(terms, fmt.Sprintf("at least %d MiB", r.GPUMemoryMiB))
	}
	if r.ComputeCapability != "" {
		terms = append(terms, "compute capability "+r.ComputeCapability+" or more")
	}
	if len(terms) == 0 {
		return ""
	}
	return " (" + strings.Join(terms, ", ") + ")"
}
