package faults

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Two tasks run one after the other on worker w's only GPU. A finish the
// first attempt resends after its accepted one (a replay under its
// submission id) does not make that attempt live again; calls of it
// accepted after the second task took the GPU do.
func TestInvariantsGPUHeldAcrossAReplayedFinish(t *testing.T) {
	final := map[string]api.Job{"ja": gpuJob("ja", "a", 0, 3), "jb": gpuJob("jb", "b", 4, 9)}
	done := &obsTask{State: api.TaskSucceeded}
	rec := func(kind opKind, task, att string, call int64, out opOutput) record {
		in := opInput{Kind: kind, Task: task, Worker: "w", Attempt: att}
		if kind == opFinish {
			in.Submission = att + "-finish"
			out.View = done
		}
		return record{in: in, out: out, call: call, ret: call + 1, ended: true}
	}
	acquire := func(task, att string, call int64) record {
		return rec(opAcquire, task, att, call, opOutput{Number: 1, Devices: []string{"g"}})
	}
	for _, tc := range []struct {
		name    string
		recs    []record
		overlap bool
	}{
		{"finish resent after the next task took the GPU", []record{
			acquire("ja-0", "a", 0), rec(opStart, "ja-0", "a", 2, opOutput{}), rec(opFinish, "ja-0", "a", 3, opOutput{}),
			acquire("jb-0", "b", 4), rec(opFinish, "ja-0", "a", 6, opOutput{}),
			rec(opStart, "jb-0", "b", 7, opOutput{}), rec(opFinish, "jb-0", "b", 8, opOutput{}),
		}, false},
		{"the first finish's answer lost, its resend accepted after the next task took the GPU (seed 90425)", []record{
			acquire("ja-0", "a", 0), rec(opStart, "ja-0", "a", 2, opOutput{}), rec(opFinish, "ja-0", "a", 3, opOutput{Unknown: true}),
			acquire("jb-0", "b", 4), rec(opFinish, "ja-0", "a", 6, opOutput{}),
			rec(opStart, "jb-0", "b", 7, opOutput{}), rec(opFinish, "jb-0", "b", 8, opOutput{}),
		}, false},
		{"logs of the first attempt accepted after the next took the GPU", []record{
			acquire("ja-0", "a", 0), rec(opStart, "ja-0", "a", 2, opOutput{}),
			acquire("jb-0", "b", 4), rec(opLogs, "ja-0", "a", 6, opOutput{}), rec(opFinish, "ja-0", "a", 7, opOutput{}),
			rec(opStart, "jb-0", "b", 8, opOutput{}), rec(opFinish, "jb-0", "b", 9, opOutput{}),
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkInvariants(tc.recs, final, false)
			got := slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "device g held by attempts") })
			if got != tc.overlap {
				t.Errorf("GPU overlap reported: %v, want %v; problems: %q", got, tc.overlap, p)
			}
		})
	}
}

// Under clock skew the final state's timestamps come from leaders whose
// clocks disagree: an attempt that the history shows ran after another
// on the same GPU may carry an earlier time. Only a schedule that stepped
// a clock skips the timestamp comparison.
func TestInvariantsSkewedTimestamps(t *testing.T) {
	// b was assigned by a leader a minute behind: its times fall inside a's.
	final := map[string]api.Job{"ja": gpuJob("ja", "a", 0, 60_000), "jb": gpuJob("jb", "b", 100, 200)}
	for _, skewed := range []bool{false, true} {
		p := checkInvariants(nil, final, skewed)
		got := slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, "device g: attempt") })
		if got == skewed {
			t.Errorf("skewed=%v: timestamp overlap reported %v; problems %q", skewed, got, p)
		}
	}
}

// gpuJob is a succeeded one-task job whose one attempt held worker w's GPU
// g from `from` to `to` ms past a fixed instant.
func gpuJob(id, att string, from, to int) api.Job {
	base := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(ms int) string { return base.Add(time.Duration(ms) * time.Millisecond).Format(api.TimeFormat) }
	zero := 0
	return api.Job{ID: id, State: api.TaskSucceeded, Tasks: []api.Task{{
		ID: id + "-0", State: api.TaskSucceeded, AttemptID: att, WorkerID: "w", ExitCode: &zero,
		Attempts: []api.Attempt{{AttemptID: att, Number: 1, WorkerID: "w", State: api.TaskSucceeded, Devices: []string{"g"}, AssignedAt: at(from), EndedAt: at(to)}},
	}}}
}
