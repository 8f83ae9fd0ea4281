package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Shared GPU tasks (docs/gpus.md, "Fractional sharing"): a task whose
// resources set gpu_sharing holds gpu_memory_mib of one GPU beside other
// shared tasks. It learns its share from GPULAYER_GPU_MEMORY_MIB; under
// MPS (Config.MPS) its CUDA client is also capped by MPS's pinned device
// memory limit, and an "enforced" share does not start without it; and
// the agent's watchdog stops it when its processes use more
// (StopOverShare).

// EnvGPUMemoryMiB tells a shared task its share of its GPU's memory, in
// MiB, so that a framework can cap itself.
const EnvGPUMemoryMiB = "GPULAYER_GPU_MEMORY_MIB"

// shareEnv is the environment of a shared task: its share, and under MPS
// the pipe directory its CUDA client connects through and the limit MPS
// holds it to. The task sees one GPU, its device 0.
func shareEnv(r *api.Resources, mpsPipeDir string) map[string]string {
	if !r.Shared() {
		return nil
	}
	return ShareEnv(r.GPUMemoryMiB, mpsPipeDir)
}

// ShareEnv is what a task holding mib of its GPU is told of its share,
// under MPS served from mpsPipeDir ("" for none): the same for a process
// of the exec executor and, through the agent's CDI spec, a container.
func ShareEnv(mib uint64, mpsPipeDir string) map[string]string {
	env := map[string]string{EnvGPUMemoryMiB: strconv.FormatUint(mib, 10)}
	if mpsPipeDir != "" {
		env["CUDA_MPS_PIPE_DIRECTORY"] = mpsPipeDir
		env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = fmt.Sprintf("0=%dM", mib)
	}
	return env
}

// ErrShareUnenforceable: an enforced share was to start while no MPS
// daemon serves the agent's GPUs (it stopped since the agent reported
// them enforcing); the attempt fails, to be retried where it can be held.
var ErrShareUnenforceable = errors.New("an enforced GPU share needs MPS, which does not serve this agent's GPUs now")

// mpsFor is the MPS pipe directory a's task runs under ("" for none), or
// ErrShareUnenforceable for an enforced share with no MPS now.
func (r *Runner) mpsFor(a api.Assignment) (string, error) {
	if !a.Resources.Shared() {
		return "", nil
	}
	var dir string
	if r.cfg.MPS != nil {
		dir = r.cfg.MPS()
	}
	if dir == "" && a.Resources.GPUSharing == api.SharingEnforced {
		return "", ErrShareUnenforceable
	}
	return dir, nil
}

// holdsApart reports whether two assignments' GPUs keep them apart: they
// share a GPU and at least one holds it whole. Shared tasks on one GPU
// run side by side.
func holdsApart(a, b api.Assignment) bool {
	return sharesDevice(a.Devices, b.Devices) && !(a.Resources.Shared() && b.Resources.Shared())
}

// Share is a running shared attempt's hold on its GPU.
type Share struct {
	TaskID, AttemptID, JobID string
	GPU                      string
	MiB                      uint64
	// UID is the attempt's own task uid when OwnUID is set (the agent
	// runs each task under a uid of its own): only processes of that uid
	// count as the attempt's, whatever attempt id their environment
	// names. Without it (every task runs as one user) the environment is
	// all there is to go on.
	UID    uint32
	OwnUID bool
}

// Shares lists the running shared attempts that have their task user, by
// attempt id.
func (r *Runner) Shares() []Share {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Share
	for _, rn := range r.running {
		a := rn.a
		if !a.Resources.Shared() || len(a.Devices) != 1 {
			continue
		}
		u := rn.user.Load()
		if u == nil {
			// Not started: it has no process yet, and until its user is
			// known whether it has a uid of its own is not either.
			continue
		}
		sh := Share{TaskID: a.ID, AttemptID: a.AttemptID, JobID: a.JobID, GPU: a.Devices[0], MiB: a.Resources.GPUMemoryMiB}
		if u.Switch && u.Exclusive {
			sh.UID, sh.OwnUID = u.UID, true
		}
		out = append(out, sh)
	}
	slices.SortFunc(out, func(x, y Share) int { return cmp.Compare(x.AttemptID, y.AttemptID) })
	return out
}

// StopOverShare stops an attempt whose processes use more of its GPU's
// memory than its share: it reports fail with reason, which the job's
// status shows. It reports whether the attempt was being run.
func (r *Runner) StopOverShare(attemptID, reason string) bool {
	return r.stopFor(attemptID, EndOverShare, reason)
}

// StopOnForeignGPU stops a shared attempt whose processes run on a GPU it
// was not given, as StopOverShare does, ending as EndForeignGPU.
func (r *Runner) StopOnForeignGPU(attemptID, reason string) bool {
	return r.stopFor(attemptID, EndForeignGPU, reason)
}

// stopFor stops a running attempt, which reports fail with reason and
// ends as end; it reports whether the attempt was being run.
func (r *Runner) stopFor(attemptID string, end End, reason string) bool {
	r.mu.Lock()
	rn, ok := r.running[attemptID]
	r.mu.Unlock()
	if ok {
		rn.cause.CompareAndSwap(nil, &stopCause{end: end, reason: reason})
		rn.stop()
	}
	return ok
}
