package state

import (
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
)

// Draining one GPU. An admin drains a GPU to take it out of service now
// (a reset, a reseat, a retirement waiting for a reset) without draining
// the whole node: the GPU is cordoned (gpuops.Cordon), and every task holding
// it, or a MIG device of it, is preempted as a worker drain preempts
// (preemptTask): one assigned but not started is requeued at once, a
// running one is named in its worker's heartbeat answers, its agent stops
// it, and its attempt ends preempted and the task requeued. A preempted
// attempt uses up no attempt, and the cordon keeps the retry off the GPU.
// A gang member requeued at once takes its gang with it (settleGang).

// drainGPU preempts the tasks on GPU c.UUID of w, whose cordon the
// caller has set, and audits the drain (gpu.drained).
func (s *Store) drainGPU(w *Worker, c command.CordonDevice) {
	reason := "GPU " + c.UUID + " of worker " + w.ID + " drained by an admin"
	if c.Reason != "" {
		reason += ": " + c.Reason
	}
	asked, requeued := 0, 0
	for _, id := range s.tasksOnGPU(w, c.UUID) {
		t := s.tasks.Get(id)
		if t == nil || !t.Active() || t.WorkerID != w.ID || t.Preempt != "" {
			continue // ended with its gang meanwhile, or already asked to stop
		}
		t = s.ownTask(t)
		if s.preemptTask(t, reason, c.Now) {
			s.settleGang(t, c.Now)
			requeued++
		} else {
			asked++
		}
	}
	detail := preemptDetail(asked, requeued)
	if c.Reason != "" {
		detail = c.Reason + "; " + detail
	}
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "gpu.drained", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source, Detail: detail})
}

// tasksOnGPU lists, sorted, the tasks w holds on GPU uuid or on a MIG
// device of it.
func (s *Store) tasksOnGPU(w *Worker, uuid string) []string {
	on := gpuops.OnGPU(w, uuid)
	var out []string
	for id := range w.Held() {
		if t := s.tasks.Get(id); t != nil && slices.ContainsFunc(t.Devices, func(d string) bool { return slices.Contains(on, d) }) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
