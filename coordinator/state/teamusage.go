package state

import "github.com/gpulayer/gpulayer/coordinator/command"

// teamUsage counts, per team, the GPUs its active tasks hold (in
// hundredths of a GPU), its active tasks and its pending ones. The GPUs
// are the team load placement enforces quotas with (teamroom.go), so a
// team record, the preemption planner and the matcher read one figure;
// the tasks come from the load's tasks, the pending queue and the jobs
// that hold pending tasks out of it: it costs the tasks in flight, not
// every task kept.
func (s *Store) teamUsage() map[string]TeamUsage {
	out := map[string]TeamUsage{}
	for _, h := range s.inuse.byTask {
		u := out[h.team]
		u.RunningTasks++
		u.CentiGPUsInUse += h.centi
		out[h.team] = u
	}
	for _, sq := range s.queue.All() {
		for _, t := range sq.Tasks {
			team := command.TeamOf(s.jobs.Get(t.JobID).Team)
			u := out[team]
			u.PendingTasks++
			out[team] = u
		}
	}
	s.forHeld(func(j *Job, held int) { // pending, but out of the queue (dependencies.go)
		team := command.TeamOf(j.Team)
		u := out[team]
		u.PendingTasks += held
		out[team] = u
	})
	return out
}

// taskCentiGPUs is what a task holds on worker w in hundredths of a GPU:
// a whole GPU counts 100; a MIG instance or a memory share its fraction
// of its GPU's memory, rounded up.
func taskCentiGPUs(w *Worker, devices []string, r *command.Resources) int64 {
	var sum int64
	for _, uuid := range devices {
		_, c := deviceCenti(w, uuid, r)
		sum += c
	}
	return sum
}

// deviceCenti is one device's part of a task, in hundredths of a GPU,
// and the model of its GPU (a MIG device's parent's).
func deviceCenti(w *Worker, uuid string, r *command.Resources) (model string, centi int64) {
	d, ok := deviceOf(w, uuid)
	switch {
	case !ok:
		return "", command.CentiGPUsPerGPU // gone from the report since: count it whole
	case r.Shared():
		return d.Name, fractionCenti(r.GPUMemoryMiB, d.MemoryMiB)
	case d.Parent != "":
		parent, ok := deviceOf(w, d.Parent)
		if !ok {
			return d.Name, command.CentiGPUsPerGPU
		}
		return parent.Name, fractionCenti(d.MemoryMiB, parent.MemoryMiB)
	}
	return d.Name, command.CentiGPUsPerGPU
}

func deviceOf(w *Worker, uuid string) (command.Device, bool) {
	for _, d := range w.Devices {
		if d.UUID == uuid {
			return d, true
		}
	}
	return command.Device{}, false
}

// fractionCenti is part/whole in hundredths, rounded up, at most 100; a
// GPU whose memory is not known counts whole.
func fractionCenti(part, whole uint64) int64 {
	if whole == 0 || part >= whole {
		return command.CentiGPUsPerGPU
	}
	return int64((part*command.CentiGPUsPerGPU + whole - 1) / whole)
}
