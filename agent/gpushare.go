package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fractional GPU sharing on the agent (docs/gpus.md, "Fractional
// sharing"). The agent reports whether it can enforce a task's memory
// share on its GPUs (MPS, found in Config.MPSPipeDir at each report), and a
// watchdog reads, from each background GPU sample, the memory each
// process uses, adds it up by attempt (a process is a task's by its uid,
// or where tasks share one user by the attempt id in its environment)
// and stops an attempt whose processes use more than its share plus a
// tolerance. It never calls NVML itself: it reads the
// sample the metrics read.

// shareTolerance is how far above its share an attempt may go before the
// watchdog stops it: 5% of the share, at least 64 MiB, for the driver's
// own rounding. The share itself covers all NVML counts for the task's
// processes, their CUDA contexts included, as MPS's limit does
// (docs/gpus.md).
func shareTolerance(share uint64) uint64 { return max(share/20, 64) }

// mpsNow is the MPS pipe directory when an MPS control daemon serves
// the GPUs now, or "".
func (a *Agent) mpsNow() string {
	if mpsServes(a.cfg.MPSPipeDir) {
		return a.cfg.MPSPipeDir
	}
	return ""
}

// mpsServes reports whether an MPS control daemon listens in pipe dir:
// its control pipe is there.
func mpsServes(dir string) bool {
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "control"))
	return err == nil
}

// markSharing names the sharing mechanism of each whole GPU not in MIG
// mode in devs (in place): mechanism, or none.
func markSharing(devs []api.Device, mechanism string) {
	for i := range devs {
		if devs[i].MIGEnabled || devs[i].Parent != "" {
			continue
		}
		devs[i].Sharing = mechanism
	}
}

// shareHolder is the runner as the watchdog sees it.
type shareHolder interface {
	Shares() []runner.Share
	StopOverShare(attemptID, reason string) bool
	StopOnForeignGPU(attemptID, reason string) bool
}

// shareWatchdog stops attempts over their share. It is used from the
// sampling loop only.
type shareWatchdog struct {
	holder shareHolder
	// uidsOf reads a process's uids (runner.ProcessUIDs); attemptOf the
	// attempt its environment names (runner.AttemptOfPID).
	uidsOf    func(pid uint32) ([4]uint32, bool)
	attemptOf func(pid uint32) (string, bool)
	log       *slog.Logger
	// blind are the GPUs with shares whose processes NVML could not
	// list, as last logged (a warning when one turns blind, once).
	blind map[string]bool

	// uses is what the last check saw of each share, for the metrics
	// (read by scrapes, hence the lock).
	mu   sync.Mutex
	uses []shareUse
}

// shareUse is a running share and the GPU memory its processes used at
// the last sample (Known false where its GPU's processes were not read).
type shareUse struct {
	Share   runner.Share
	UsedMiB uint64
	Known   bool
}

// lastUses is what the last check saw of each share.
func (w *shareWatchdog) lastUses() []shareUse {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.uses
}

// owners traces processes to the shares they count for. Where a task
// runs under a uid of its own (Share.OwnUID), a process counts for it by
// its uid alone, which a task cannot forge or shed: clearing its
// environment does not hide it, and naming another attempt there gets
// that attempt nothing. Only tasks that share the agent's one task user
// are traced by the attempt id in their environment.
type owners struct {
	byUID     map[uint32]runner.Share
	byAttempt map[string]runner.Share // shares without a uid of their own
}

func ownersOf(shares []runner.Share) owners {
	o := owners{byUID: map[uint32]runner.Share{}, byAttempt: map[string]runner.Share{}}
	for _, sh := range shares {
		if sh.OwnUID {
			o.byUID[sh.UID] = sh
		} else {
			o.byAttempt[sh.AttemptID] = sh
		}
	}
	return o
}

// of names the share pid counts for. The environment is read only when
// env is set (a process on a shared GPU, where tasks sharing one user are
// traced by it).
func (w *shareWatchdog) of(o owners, pid uint32, env bool) (runner.Share, bool) {
	uids, ok := w.uidsOf(pid)
	if !ok {
		return runner.Share{}, false
	}
	for _, u := range uids {
		if sh, ok := o.byUID[u]; ok {
			return sh, true
		}
	}
	if !env || len(o.byAttempt) == 0 {
		return runner.Share{}, false
	}
	att, ok := w.attemptOf(pid)
	if !ok {
		return runner.Share{}, false
	}
	sh, ok := o.byAttempt[att]
	return sh, ok
}

// check reads one sample against the running shares and stops every
// attempt over its share, and every attempt with a uid of its own whose
// processes run on a GPU it was not given (CUDA_VISIBLE_DEVICES is the
// task's to rewrite; its uid is not). A GPU whose processes could not be
// read stops nothing (the watchdog cannot tell whose memory is whose): it
// is logged, and NVML's failure counted by the sampler. The processes of
// GPUs without shares are looked up only while a share has a uid of its
// own, and by uid alone.
func (w *shareWatchdog) check(samples []nvml.Sample) {
	shares := w.holder.Shares()
	uses := make([]shareUse, 0, len(shares))
	defer func() {
		w.mu.Lock()
		w.uses = uses
		w.mu.Unlock()
	}()
	if len(shares) == 0 {
		return
	}
	shared := map[string]bool{}
	for _, sh := range shares {
		shared[sh.GPU] = true
	}
	o := ownersOf(shares)
	used := map[string]uint64{}      // by attempt, over its processes on its own GPU
	read := map[string]bool{}        // GPUs whose processes were read
	elsewhere := map[string]string{} // attempt → a GPU it was not given that it runs on
	for _, s := range samples {
		if !s.ProcessesRead || (!shared[s.UUID] && len(o.byUID) == 0) {
			continue
		}
		if shared[s.UUID] {
			read[s.UUID] = true
		}
		for _, p := range s.Processes {
			sh, ok := w.of(o, p.PID, shared[s.UUID])
			switch {
			case !ok:
			case sh.GPU == s.UUID:
				if p.UsedKnown {
					used[sh.AttemptID] += p.UsedMiB
				}
			case sh.OwnUID && elsewhere[sh.AttemptID] == "":
				elsewhere[sh.AttemptID] = s.UUID
			}
		}
	}
	for _, sh := range shares {
		uses = append(uses, shareUse{Share: sh, UsedMiB: used[sh.AttemptID], Known: read[sh.GPU]})
		if gpu := elsewhere[sh.AttemptID]; gpu != "" {
			reason := fmt.Sprintf("ran on GPU %s, which it was not given (its share is of GPU %s)", gpu, sh.GPU)
			if w.holder.StopOnForeignGPU(sh.AttemptID, reason) {
				w.log.Warn("stopping a task that runs on a GPU it was not given", "task_id", sh.TaskID, "attempt_id", sh.AttemptID, "uuid", gpu, "share_uuid", sh.GPU)
			}
			continue
		}
		if !read[sh.GPU] {
			if !w.blind[sh.GPU] {
				w.blind[sh.GPU] = true
				w.log.Warn("cannot read the processes on a shared GPU: its tasks' shares are not watched", "uuid", sh.GPU)
			}
			continue
		}
		if w.blind[sh.GPU] {
			delete(w.blind, sh.GPU)
			w.log.Info("the processes on a shared GPU are read again: its tasks' shares are watched", "uuid", sh.GPU)
		}
		u := used[sh.AttemptID]
		if u <= sh.MiB+shareTolerance(sh.MiB) {
			continue
		}
		reason := fmt.Sprintf("used %d MiB of GPU %s, over its share of %d MiB (gpu_memory_mib)", u, sh.GPU, sh.MiB)
		if w.holder.StopOverShare(sh.AttemptID, reason) {
			w.log.Warn("stopping a task over its GPU memory share", "task_id", sh.TaskID, "attempt_id", sh.AttemptID, "uuid", sh.GPU, "used_mib", u, "share_mib", sh.MiB)
		}
	}
}
