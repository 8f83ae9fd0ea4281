package agent

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fractional GPU sharing on the agent (docs/gpus.md, "Fractional
// sharing"). The agent reports whether it can enforce a task's memory
// share on its GPUs (MPS, found in Config.MPSPipeDir at each report), and a
// watchdog reads, from each background GPU sample, the memory each
// process uses, adds it up by attempt (a task's processes carry its
// attempt id) and stops an attempt whose processes use more than its
// share plus a tolerance. It never calls NVML itself: it reads the
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
}

// shareWatchdog stops attempts over their share. It is used from the
// sampling loop only.
type shareWatchdog struct {
	holder shareHolder
	// attemptOf names the attempt a process says it is of, and its uid
	// (runner.AttemptOfPID).
	attemptOf func(pid uint32) (attemptID string, uid uint32, ok bool)
	log       *slog.Logger
	// blind are the GPUs with shares whose processes NVML could not
	// list, as last logged (a warning when one turns blind, once).
	blind map[string]bool
}

// overShare is an attempt the watchdog stops, and why.
type overShare struct {
	AttemptID, Reason string
}

// check reads one sample against the running shares and stops every
// attempt over its share; it returns those it stopped. A GPU whose
// processes could not be read stops nothing (the watchdog cannot tell
// whose memory is whose): it is logged, and NVML's failure counted by
// the sampler.
func (w *shareWatchdog) check(samples []nvml.Sample) []overShare {
	shares := w.holder.Shares()
	if len(shares) == 0 {
		return nil
	}
	byGPU := make(map[string]nvml.Sample, len(samples))
	for _, s := range samples {
		byGPU[s.UUID] = s
	}
	byAttempt := make(map[string]runner.Share, len(shares))
	for _, sh := range shares {
		byAttempt[sh.AttemptID] = sh
	}
	var stopped []overShare
	used := map[string]uint64{} // by attempt, summed over its processes on its GPU
	read := map[string]bool{}   // GPUs whose processes were read
	for gpu, s := range byGPU {
		if !s.ProcessesRead {
			continue
		}
		read[gpu] = true
		for _, p := range s.Processes {
			if !p.UsedKnown {
				continue
			}
			att, uid, ok := w.attemptOf(p.PID)
			if !ok {
				continue
			}
			// A process that names an attempt whose task runs under a uid
			// of its own counts only under that uid: another task cannot
			// get it stopped by borrowing its id.
			if sh, known := byAttempt[att]; known && sh.OwnUID && sh.UID != uid {
				continue
			}
			used[gpu+"\x00"+att] += p.UsedMiB
		}
	}
	for _, sh := range shares {
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
		u := used[sh.GPU+"\x00"+sh.AttemptID]
		if u <= sh.MiB+shareTolerance(sh.MiB) {
			continue
		}
		reason := fmt.Sprintf("used %d MiB of GPU %s, over its share of %d MiB (gpu_memory_mib)", u, sh.GPU, sh.MiB)
		if w.holder.StopOverShare(sh.AttemptID, reason) {
			w.log.Warn("stopping a task over its GPU memory share", "task_id", sh.TaskID, "attempt_id", sh.AttemptID, "uuid", sh.GPU, "used_mib", u, "share_mib", sh.MiB)
			stopped = append(stopped, overShare{AttemptID: sh.AttemptID, Reason: reason})
		}
	}
	return stopped
}
