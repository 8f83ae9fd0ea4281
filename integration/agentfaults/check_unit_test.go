//go:build linux

package agentfaults

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func intp(n int) *int { return &n }

// cleanWorld is a consistent outcome: j1 lost its first attempt (its agent
// killed) and succeeded on the second; j2 failed on purpose with exit 3.
func cleanWorld() observed {
	gpu := []string{"GPU-a"}
	return observed{
		Plans: map[string]jobPlan{"j1": {Key: "j1", GPUs: 1}, "j2": {Key: "j2", Exit: 3}},
		Jobs: map[string]api.Job{
			"j1": {ID: "job1", Tasks: []api.Task{{ID: "t1", State: api.TaskSucceeded, ExitCode: intp(0), Attempts: []api.Attempt{
				{AttemptID: "a1", WorkerID: "w0", State: api.AttemptLost, Devices: gpu, Reason: "lease expired on worker w0"},
				{AttemptID: "a2", WorkerID: "w1", State: api.TaskSucceeded, Devices: gpu, ExitCode: intp(0)},
			}}}},
			"j2": {ID: "job2", Tasks: []api.Task{{ID: "t2", State: api.TaskFailed, ExitCode: intp(3), Reason: "exit code 3", Attempts: []api.Attempt{
				{AttemptID: "b1", WorkerID: "w0", State: api.TaskFailed, ExitCode: intp(3)},
			}}}},
		},
		Events: []event{
			{Kind: "start", Key: "j1", Attempt: "a1", Agent: "work-w0", GPUs: gpu, Line: 1},
			{Kind: "start", Key: "j1", Attempt: "a2", Agent: "work-w1", GPUs: gpu, Line: 3},
			{Kind: "end", Key: "j1", Attempt: "a2", Agent: "work-w1", Exit: 0, Line: 4},
			{Kind: "start", Key: "j2", Attempt: "b1", Agent: "work-w0", Line: 5},
			{Kind: "end", Key: "j2", Attempt: "b1", Agent: "work-w0", Exit: 3, Line: 6},
		},
		Hits: []hitAttempt{{Fault: faultKill, Agent: "w0", TaskID: "t1", AttemptID: "a1"}},
	}
}

// The checks pass a consistent outcome and flag every planted anomaly.
func TestCheckFlagsPlantedAnomalies(t *testing.T) {
	cases := []struct {
		name  string
		plant func(o *observed)
		want  string // a violation containing this; "" for none
	}{
		{"consistent", func(*observed) {}, ""},
		{"a task that never ends", func(o *observed) {
			o.Jobs["j2"].Tasks[0].State = api.TaskRunning
		}, "did not end"},
		{"a task that succeeds twice", func(o *observed) {
			o.Jobs["j1"].Tasks[0].Attempts[0].State = api.TaskSucceeded
			o.Jobs["j1"].Tasks[0].Attempts[0].ExitCode = intp(0)
			o.Events = append(o.Events, event{Kind: "end", Key: "j1", Attempt: "a1", Agent: "work-w0"})
		}, "succeeded 2 times"},
		{"two copies at once", func(o *observed) {
			o.Events = append(o.Events, event{Kind: "overlap", What: "task", Key: "j1", Attempt: "a2", Agent: "work-w1"})
		}, "task overlap"},
		{"a GPU in two hands", func(o *observed) {
			o.Events = append(o.Events, event{Kind: "overlap", What: "gpu", Key: "j1", Attempt: "a2", Agent: "work-w1", GPUs: []string{"GPU-a"}})
		}, "gpu overlap"},
		{"a success without a completed run", func(o *observed) {
			o.Events = slices.DeleteFunc(o.Events, func(e event) bool { return e.Kind == "end" && e.Attempt == "a2" })
		}, "never ended with 0"},
		{"an exit code no run ended with", func(o *observed) {
			o.Events[4].Exit = 4
		}, "never ended with"},
		{"a run on another worker than assigned", func(o *observed) {
			o.Events[1].Agent = "work-w0"
		}, "gave it to w1"},
		{"a run with other GPUs than assigned", func(o *observed) {
			o.Events[1].GPUs = []string{"GPU-b"}
		}, "was assigned"},
		{"a run of an attempt the job does not have", func(o *observed) {
			o.Events = append(o.Events, event{Kind: "start", Key: "j2", Attempt: "zz", Agent: "work-w0"})
		}, "does not have"},
		{"a killed attempt never retried", func(o *observed) {
			tk := &o.Jobs["j1"].Tasks[0]
			tk.Attempts = tk.Attempts[:1]
			tk.State = api.TaskFailed
		}, "was not retried"},
		{"a plugin crash that fails without naming it", func(o *observed) {
			o.Hits = append(o.Hits, hitAttempt{Fault: faultCrashPlugin, Agent: "w0", TaskID: "t1", AttemptID: "a1"})
			a := &o.Jobs["j1"].Tasks[0].Attempts[0]
			a.State, a.Reason = api.TaskFailed, "something"
		}, "does not name the crash"},
		{"a plugin crash that succeeds without its run ending", func(o *observed) {
			o.Hits = append(o.Hits, hitAttempt{Fault: faultCrashPlugin, Agent: "w1", TaskID: "t1", AttemptID: "a2"})
			o.Events = slices.DeleteFunc(o.Events, func(e event) bool { return e.Kind == "end" && e.Attempt == "a2" })
		}, "plugin was killed before its task ended"},
		{"a failure without a reason", func(o *observed) {
			o.Jobs["j1"].Tasks[0].Attempts[0].Reason = ""
		}, "without a reason"},
		{"a job that should succeed fails", func(o *observed) {
			o.Plans["j2"] = jobPlan{Key: "j2"}
		}, "want succeeded"},
		{"a job that should fail with its code succeeds", func(o *observed) {
			o.Plans["j1"] = jobPlan{Key: "j1", Exit: 2}
		}, "want failed with exit code 2"},
		{"done work that ran again", func(o *observed) {
			// a1 ended with 0 on a live agent (no fault struck it), yet
			// a2 started the task anew: its report was lost.
			o.Hits = nil
			o.Events = append(o.Events, event{Kind: "end", Key: "j1", Attempt: "a1", Agent: "work-w0", Exit: 0, Line: 2})
		}, "ran again"},
		{"a struck attempt's work may run again", func(o *observed) {
			// The same, but a1's agent was killed: its report may have
			// gone with it.
			o.Events = append(o.Events, event{Kind: "end", Key: "j1", Attempt: "a1", Agent: "work-w0", Exit: 0, Line: 2})
		}, ""},
		{"a problem seen during the faults", func(o *observed) {
			o.Problems = append(o.Problems, "agent w0 killed with SIGKILL: processes still run")
		}, "still run"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := cleanWorld()
			c.plant(&o)
			got := check(o)
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("violations in a consistent outcome: %q", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, c.want) }) {
				t.Fatalf("violations %q, want one saying %q", got, c.want)
			}
		})
	}
}

func TestParseEvent(t *testing.T) {
	cases := []struct {
		line string
		want event
		bad  bool
	}{
		{line: "start j01 att work-a0 123 GPU-1,GPU-2", want: event{Kind: "start", Key: "j01", Attempt: "att", Agent: "work-a0", PID: 123, GPUs: []string{"GPU-1", "GPU-2"}}},
		{line: "start j01 att work-a0 123 -", want: event{Kind: "start", Key: "j01", Attempt: "att", Agent: "work-a0", PID: 123}},
		{line: "end j01 att work-a0 3", want: event{Kind: "end", Key: "j01", Attempt: "att", Agent: "work-a0", Exit: 3}},
		{line: "overlap gpu j01 att work-a0 GPU-1", want: event{Kind: "overlap", What: "gpu", Key: "j01", Attempt: "att", Agent: "work-a0", GPUs: []string{"GPU-1"}}},
		{line: "overlap task j01 att work-a0", want: event{Kind: "overlap", What: "task", Key: "j01", Attempt: "att", Agent: "work-a0"}},
		{line: "start j01 att", bad: true},
		{line: "end j01 att work-a0 x", bad: true},
		{line: "bogus", bad: true},
	}
	for _, c := range cases {
		got, err := parseEvent(c.line)
		if c.bad {
			if err == nil {
				t.Errorf("parseEvent(%q) = %+v, want an error", c.line, got)
			}
			continue
		}
		if err != nil || got.Kind != c.want.Kind || got.Key != c.want.Key || got.Attempt != c.want.Attempt || got.Agent != c.want.Agent ||
			got.PID != c.want.PID || got.Exit != c.want.Exit || got.What != c.want.What || !slices.Equal(got.GPUs, c.want.GPUs) {
			t.Errorf("parseEvent(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
		}
	}
}

// The plan is the seed's alone, and covers every fault kind over two
// seeds in a row.
func TestPlanIsTheSeeds(t *testing.T) {
	a, b := newPlan(7), newPlan(7)
	if a.String() != b.String() || len(a.Jobs) != len(b.Jobs) {
		t.Fatalf("seed 7 drew two plans:\n%s\n%s", a, b)
	}
	kinds := map[string]bool{}
	for _, seed := range []uint64{1, 2} {
		p := newPlan(seed)
		for _, f := range p.Faults {
			kinds[f.Kind] = true
			if f.Kind != faultRestartLeader && f.Target.Sleep < leaseSeconds*1e9 {
				t.Errorf("seed %d: %s's job runs %v, less than a lease", seed, f.Kind, f.Target.Sleep)
			}
		}
		for _, j := range p.Jobs {
			if j.GPUs > maxScriptGPUs {
				t.Errorf("seed %d: job %s wants %d GPUs, the script locks at most %d", seed, j.Key, j.GPUs, maxScriptGPUs)
			}
		}
	}
	for _, k := range faultKinds {
		if !kinds[k] {
			t.Errorf("seeds 1 and 2 never inject %s", k)
		}
	}
}
