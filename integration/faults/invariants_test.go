package faults

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// checkInvariants checks, once every fault has healed and every job has
// ended, what must hold of the final, converged state and of the history:
//
//   - every acknowledged job has ended;
//   - no task has two succeeded attempts, and no two attempts of one task
//     had a finish accepted;
//   - no task had two live attempts at once: in the final state, each
//     attempt but the last has ended, no later than the next one was
//     assigned; in the history, no two attempts of a task were both
//     certainly live at one instant;
//   - no device was held by two live attempts of one worker at once, in
//     the final state and in the history;
//   - every accepted finish is kept: the task's current attempt is the one
//     finished, in the state and with the exit code the answer gave.
//
// (That the three nodes hold byte-identical state is checked before, by
// coordinatortest's Converged, on every node's snapshot.)
//
// With skewed set (a schedule that stepped a coordinator's clock), the
// final state's timestamps are not compared: each is read from the clock
// of the leader that committed it, so under skew they are out of order
// across leaders (seed 10024: an attempt assigned by the stepped leader
// carried a time a minute before others on the same GPU). The history,
// timed by one monotonic clock, still checks the same two properties.
//
// An attempt is certainly live, in the history, from the return of the
// acquire that handed it out (it was assigned before) to the call of the
// last call on it that was accepted (it was still current after): it
// lives over one interval, from its assignment to its end.
func checkInvariants(recs []record, final map[string]api.Job, skewed bool) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	type interval struct{ from, to time.Time }
	type hold struct {
		attempt string
		task    string
		iv      interval
	}
	byDevice := map[[2]string][]hold{} // (worker, device) -> attempts
	jobIDs := make([]string, 0, len(final))
	for id := range final {
		jobIDs = append(jobIDs, id)
	}
	sort.Strings(jobIDs)
	for _, id := range jobIDs {
		j := final[id]
		if !terminal(j.State) {
			bad("job %s has not ended: %s", id, describeJob(j))
		}
		for _, t := range j.Tasks {
			won := 0
			var prevEnd time.Time
			for i, a := range t.Attempts {
				assigned, _ := api.ParseTime(a.AssignedAt)
				ended, endErr := api.ParseTime(a.EndedAt)
				if a.State == api.TaskSucceeded {
					won++
				}
				if a.EndedAt == "" {
					ended = time.Unix(1<<40, 0) // still live
					if i != len(t.Attempts)-1 || terminal(t.State) {
						bad("task %s: attempt #%d (%s) never ended, and the task is %s with %d attempts", t.ID, a.Number, a.State, t.State, len(t.Attempts))
					}
				} else if endErr != nil {
					bad("task %s: attempt #%d: ended_at %q: %v", t.ID, a.Number, a.EndedAt, endErr)
				}
				if i > 0 && assigned.Before(prevEnd) && !skewed {
					bad("task %s: attempt #%d assigned at %s, before attempt #%d ended at %s", t.ID, a.Number, a.AssignedAt, a.Number-1, t.Attempts[i-1].EndedAt)
				}
				prevEnd = ended
				for _, d := range a.Devices {
					k := [2]string{a.WorkerID, d}
					byDevice[k] = append(byDevice[k], hold{attempt: a.AttemptID, task: t.ID, iv: interval{assigned, ended}})
				}
			}
			if won > 1 || (t.State == api.TaskSucceeded && won != 1) {
				bad("task %s is %s with %d succeeded attempts", t.ID, t.State, won)
			}
		}
	}
	for k, hs := range byDevice {
		if skewed {
			break
		}
		slices.SortFunc(hs, func(a, b hold) int { return a.iv.from.Compare(b.iv.from) })
		for i := 1; i < len(hs); i++ {
			if hs[i].iv.from.Before(hs[i-1].iv.to) {
				bad("worker %s device %s: attempt %s of %s assigned at %s while attempt %s of %s held it until %s",
					k[0], k[1], hs[i].attempt, hs[i].task, hs[i].iv.from.Format(api.TimeFormat), hs[i-1].attempt, hs[i-1].task, hs[i-1].iv.to.Format(api.TimeFormat))
			}
		}
	}

	// The history.
	type live struct {
		task, worker string
		devices      []string
		from, to     int64 // acquire's return, last accepted call's call
		hasFrom      bool
		// over: a finish or fail was accepted. The attempt's process
		// ended before that call; a finish resent after it (a replay
		// under its submission id) says nothing of a live process, and
		// the worker may already hold the GPUs for its next task.
		over bool
	}
	lives := map[string]*live{}
	get := func(att string) *live {
		l, ok := lives[att]
		if !ok {
			l = &live{to: -1}
			lives[att] = l
		}
		return l
	}
	// An attempt's process ended before its first finish or fail was
	// sent, whatever became of that call: when its answer was lost, the
	// resend's acceptance (a replay) says nothing of a live process.
	firstEnd := map[string]int64{}
	for _, rec := range recs {
		if rec.in.Kind != opFinish && rec.in.Kind != opFail {
			continue
		}
		if e, ok := firstEnd[rec.in.Attempt]; !ok || rec.call < e {
			firstEnd[rec.in.Attempt] = rec.call
		}
	}
	finishedBy := map[string]map[string]bool{} // task -> attempts with an accepted finish
	for _, rec := range recs {
		if !rec.ended || rec.out.Unknown || rec.out.Code != "" || rec.drop {
			continue
		}
		switch rec.in.Kind {
		case opAcquire:
			if rec.in.Attempt == "" {
				continue
			}
			l := get(rec.in.Attempt)
			l.task, l.worker, l.devices, l.from, l.hasFrom = rec.in.Task, rec.in.Worker, rec.out.Devices, rec.ret, true
		case opStart, opLogs, opFail, opFinish:
			l := get(rec.in.Attempt)
			l.task, l.worker = rec.in.Task, rec.in.Worker
			if !l.over {
				l.to = max(l.to, rec.call)
			}
			l.over = l.over || rec.in.Kind == opFail || rec.in.Kind == opFinish
		}
		if rec.in.Kind != opFinish {
			continue
		}
		if finishedBy[rec.in.Task] == nil {
			finishedBy[rec.in.Task] = map[string]bool{}
		}
		finishedBy[rec.in.Task][rec.in.Attempt] = true
		v := rec.out.View
		j, ok := final[jobOf(rec.in.Task)]
		if !ok || len(j.Tasks) != 1 || v == nil {
			bad("accepted finish of %s (attempt %s): no final view of the job", rec.in.Task, rec.in.Attempt)
			continue
		}
		t := j.Tasks[0]
		var att *api.Attempt
		for i := range t.Attempts {
			if t.Attempts[i].AttemptID == rec.in.Attempt {
				att = &t.Attempts[i]
			}
		}
		switch {
		case t.AttemptID != rec.in.Attempt || t.State != v.State || t.ExitCode == nil || *t.ExitCode != rec.in.ExitCode:
			bad("accepted finish of %s by attempt %s (answered %s, exit %d) is not kept: the task is %s", rec.in.Task, rec.in.Attempt, v.State, rec.in.ExitCode, describeJob(j))
		case att == nil || att.State != v.State:
			bad("accepted finish of %s by attempt %s (answered %s): the attempt is not shown so: %s", rec.in.Task, rec.in.Attempt, v.State, describeJob(j))
		}
	}
	for task, atts := range finishedBy {
		if len(atts) > 1 {
			bad("task %s: finishes of %d different attempts were accepted", task, len(atts))
		}
	}
	var ls []*live
	names := map[*live]string{}
	for att, l := range lives {
		if e, ok := firstEnd[att]; ok && l.to > e {
			l.to = e
		}
		if l.hasFrom && l.to >= l.from {
			ls = append(ls, l)
			names[l] = att
		}
	}
	sort.Slice(ls, func(i, k int) bool { return ls[i].from < ls[k].from })
	for i, a := range ls {
		for _, b := range ls[i+1:] {
			if b.from > a.to {
				break
			}
			// a and b were both live over [b.from, min(a.to, b.to)].
			switch {
			case a.task == b.task:
				bad("task %s: attempts %s and %s were both live at %s ms", a.task, names[a], names[b], ms(b.from))
			case a.worker == b.worker:
				for _, d := range a.devices {
					if slices.Contains(b.devices, d) {
						bad("worker %s: device %s held by attempts %s (%s) and %s (%s) at %s ms", a.worker, d, names[a], a.task, names[b], b.task, ms(b.from))
					}
				}
			}
		}
	}
	return out
}

// jobOf is the job id of a task id (<job id>-<index>).
func jobOf(task string) string {
	for i := len(task) - 1; i >= 0; i-- {
		if task[i] == '-' {
			return task[:i]
		}
	}
	return task
}
