//go:build linux

package agentfaults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// hitAttempt is an attempt running where a fault struck: on an agent
// killed with SIGKILL, in a plugin process killed with SIGKILL, or on an
// agent paused past its lease.
type hitAttempt struct {
	Fault     string // faultKill, faultCrashPlugin or faultPause
	Agent     string // the agent's worker id
	TaskID    string
	AttemptID string
}

// observed is what a schedule leaves to check: the plan, the final view
// of every acknowledged job (by key), the tasks' events, the attempts the
// faults struck, and problems seen while the faults ran (processes left
// running by a killed agent, agents that exited by themselves, an agent
// that came back as another worker).
type observed struct {
	Plans    map[string]jobPlan
	Jobs     map[string]api.Job
	Events   []event
	Hits     []hitAttempt
	Problems []string
}

func terminal(state string) bool {
	return state == api.TaskSucceeded || state == api.TaskFailed || state == api.TaskCancelled
}

// check returns every violation of the invariants in o, each a sentence.
func check(o observed) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	bad = append(bad, o.Problems...)

	type attemptRef struct {
		key  string
		task api.Task
		att  api.Attempt
	}
	attempts := map[string]attemptRef{} // by attempt id
	tasks := map[string]string{}        // task id -> key
	for key, j := range o.Jobs {
		for _, tk := range j.Tasks {
			tasks[tk.ID] = key
			for _, a := range tk.Attempts {
				attempts[a.AttemptID] = attemptRef{key, tk, a}
			}
		}
	}
	starts := map[string]event{} // by attempt
	ends := map[string]event{}
	for _, e := range o.Events {
		if e.Kind == "overlap" {
			badf("%s: %s overlap: attempt %s on %s found another live process holding its %s lock %v", e.Key, e.What, e.Attempt, e.Agent, e.What, e.GPUs)
			continue
		}
		ref, ok := attempts[e.Attempt]
		if !ok {
			if _, acked := o.Jobs[e.Key]; acked {
				badf("%s: event %v names attempt %s, which its job does not have", e.Key, e, e.Attempt)
			}
			continue
		}
		if ref.key != e.Key {
			badf("event %v: attempt %s belongs to job %s", e, e.Attempt, ref.key)
		}
		if want := "work-" + ref.att.WorkerID; e.Agent != want {
			badf("%s: attempt %s ran on %s, but the coordinator gave it to %s", e.Key, e.Attempt, e.Agent, ref.att.WorkerID)
		}
		m := starts
		if e.Kind == "end" {
			m = ends
		}
		if prev, dup := m[e.Attempt]; dup {
			badf("%s: attempt %s has two %s events (%v, %v)", e.Key, e.Attempt, e.Kind, prev, e)
		}
		m[e.Attempt] = e
		if e.Kind == "start" && !sameSet(e.GPUs, ref.att.Devices) {
			badf("%s: attempt %s ran with GPUs %v, but was assigned %v", e.Key, e.Attempt, e.GPUs, ref.att.Devices)
		}
	}

	for key, j := range o.Jobs {
		p := o.Plans[key]
		for _, tk := range j.Tasks {
			if !terminal(tk.State) {
				badf("%s: task %s did not end: %s after %d attempts (%s)", key, tk.ID, tk.State, tk.Attempt, tk.Reason)
				continue
			}
			succeeded := 0
			for _, a := range tk.Attempts {
				if a.State == api.TaskSucceeded {
					succeeded++
					if _, ok := starts[a.AttemptID]; !ok {
						badf("%s: attempt %s succeeded without its task ever starting", key, a.AttemptID)
					}
					if e, ok := ends[a.AttemptID]; !ok || e.Exit != 0 {
						badf("%s: attempt %s succeeded, but its task never ended with 0 (end event: %v)", key, a.AttemptID, e)
					}
				}
				if a.ExitCode != nil && *a.ExitCode > 0 && *a.ExitCode < 128 && *a.ExitCode != 97 {
					if e, ok := ends[a.AttemptID]; !ok || e.Exit != *a.ExitCode {
						badf("%s: attempt %s finished with exit code %d, which its task never ended with", key, a.AttemptID, *a.ExitCode)
					}
				}
				if (a.State == api.TaskFailed || a.State == api.AttemptLost) && a.ExitCode == nil && a.Reason == "" {
					badf("%s: attempt %s %s without a reason", key, a.AttemptID, a.State)
				}
			}
			if succeeded > 1 {
				badf("%s: task %s succeeded %d times", key, tk.ID, succeeded)
			}
			exhausted := tk.State == api.TaskFailed && len(tk.Attempts) >= maxAttempts && strings.Contains(tk.Reason, "attempts)")
			switch {
			case exhausted:
			case p.Exit == 0 && tk.State != api.TaskSucceeded:
				badf("%s: task %s ended %s (%s), want succeeded", key, tk.ID, tk.State, tk.Reason)
			case p.Exit != 0 && (tk.State != api.TaskFailed || tk.ExitCode == nil || *tk.ExitCode != p.Exit):
				badf("%s: task %s ended %s (exit %s, %s), want failed with exit code %d", key, tk.ID, tk.State, fmtCode(tk.ExitCode), tk.Reason, p.Exit)
			}
		}
	}

	bad = append(bad, ranAgain(o, starts, ends)...)

	for _, h := range o.Hits {
		ref, ok := attempts[h.AttemptID]
		if !ok {
			badf("%s on %s: attempt %s of task %s is unknown to the coordinator", h.Fault, h.Agent, h.AttemptID, h.TaskID)
			continue
		}
		a, tk := ref.att, ref.task
		last := tk.Attempts[len(tk.Attempts)-1].AttemptID == a.AttemptID
		_, ended := ends[a.AttemptID]
		switch h.Fault {
		case faultKill:
			// Killed with its agent: it finished before (its end was
			// reported), or it was retried, or it used the last attempt.
			finished := a.ExitCode != nil
			if !finished && last && len(tk.Attempts) < maxAttempts {
				badf("%s: attempt %s, running when agent %s was killed, is %s and its task was not retried (%s)", ref.key, a.AttemptID, h.Agent, a.State, tk.State)
			}
		case faultCrashPlugin:
			// Its plugin died under it: unless the task had already
			// ended, the attempt fails naming the crash (or is lost, if
			// its agent went too), never succeeds.
			switch {
			case a.State == api.TaskSucceeded && !ended:
				badf("%s: attempt %s succeeded although its plugin was killed before its task ended", ref.key, a.AttemptID)
			case a.State == api.TaskFailed && a.ExitCode == nil && !strings.Contains(a.Reason, "exited unexpectedly"):
				badf("%s: attempt %s failed after its plugin crashed with reason %q, which does not name the crash", ref.key, a.AttemptID, a.Reason)
			case !terminal(a.State) && a.State != api.AttemptLost && a.State != api.AttemptStale:
				badf("%s: attempt %s is still %s after its plugin crashed", ref.key, a.AttemptID, a.State)
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func fmtCode(c *int) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprint(*c)
}

// ranAgain finds done work that ran again: a task whose process ended
// with 0 under one attempt, and which another attempt started after. Its
// agent kept the report (the spool) through any outage, so the only
// excuses are faults that took the report with them: the agent killed
// (before the report was on disk) or paused past its lease (its attempt
// counted lost), or the plugin killed before it saw the end. Attempts
// the faults struck are therefore exempt, and only those.
func ranAgain(o observed, starts, ends map[string]event) []string {
	struck := map[string]bool{}
	for _, h := range o.Hits {
		struck[h.AttemptID] = true
	}
	var bad []string
	for key, j := range o.Jobs {
		for _, tk := range j.Tasks {
			for i, done := range tk.Attempts {
				if e, ok := ends[done.AttemptID]; !ok || e.Exit != 0 || struck[done.AttemptID] {
					continue
				}
				for _, later := range tk.Attempts[i+1:] {
					if s, ok := starts[later.AttemptID]; ok && s.Line > ends[done.AttemptID].Line {
						bad = append(bad, fmt.Sprintf("%s: task %s ran again: attempt %s (%s) ended with 0, then attempt %s started it anew",
							key, tk.ID, done.AttemptID, done.State, later.AttemptID))
						break
					}
				}
			}
		}
	}
	return bad
}
