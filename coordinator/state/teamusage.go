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
	s.deps.HeldTasks(depTables{s}, func(j *Job, held int) { // pending, but out of the queue
		team := command.TeamOf(j.Team)
		u := out[team]
		u.PendingTasks += held
		out[team] = u
	})
	return out
}
