package faults

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Hand-written histories with planted anomalies for the checks of
// donework_test.go: each must be flagged, each excuse must hold only for
// the fault that explains it, and legal histories must pass.

func hAcquire(task, att, worker string, number int, call, ret int64) record {
	return record{in: opInput{Kind: opAcquire, Task: task, Attempt: att, Worker: worker}, out: opOutput{Number: number}, call: call, ret: ret, ended: true}
}

func hCall(kind opKind, task, att, worker string, call int64, code api.Code) record {
	return record{in: opInput{Kind: kind, Task: task, Attempt: att, Worker: worker}, out: opOutput{Code: code}, call: call, ret: call + 1, ended: true}
}

func hEvent(kind evKind, at int64, worker, att string) event {
	return event{kind: kind, at: at, worker: worker, task: "t", attempt: att}
}

func hSettled(at int64, worker, att, verdict string) event {
	e := hEvent(evSettled, at, worker, att)
	e.verdict = verdict
	return e
}

func TestDoneWorkChecks(t *testing.T) {
	// Attempt a1 runs task t on w1 (handed out at 10, ended with 0 at 40,
	// its report kept at 41); a2 runs it again on w2.
	base := []record{hAcquire("t", "a1", "w1", 1, 0, 10), hCall(opStart, "t", "a1", "w1", 20, "")}
	again := []record{hAcquire("t", "a2", "w2", 2, 90, 100), hCall(opStart, "t", "a2", "w2", 110, "")}
	run := []event{hEvent(evRunEnd, 40, "w1", "a1"), hEvent(evKept, 41, "w1", "a1")}
	refused := append(slices.Clone(run), hSettled(120, "w1", "a1", string(api.CodeStaleAttempt)))
	accepted := append(slices.Clone(run), hSettled(50, "w1", "a1", "accepted"))
	with := func(evs []event, more ...event) []event { return append(slices.Clone(evs), more...) }
	recs := func(rs ...[]record) []record { return slices.Concat(rs...) }

	for _, tc := range []struct {
		name   string
		recs   []record
		events []event
		// want: a substring of the one problem expected ("" for none);
		// excuse: the excuse counted ("" for none).
		want, excuse string
	}{
		{"report accepted, the task never ran again", base, accepted, "", ""},
		{"report refused with no fault on the worker", recs(base, again), refused, "done work was discarded", ""},
		{"report refused, the task not run again, no fault", base, refused, "done work was discarded", ""},
		{"report refused, the worker frozen while it held the attempt", recs(base, again),
			with(refused, hEvent(evPause, 45, "w1", ""), hEvent(evResume, 115, "w1", "")), "", excuseFreeze},
		{"frozen while it held the attempt, never thawed", recs(base, again),
			with(refused, hEvent(evPause, 30, "w1", "")), "", excuseFreeze},
		{"frozen before the attempt was handed out", recs(base, again),
			with(refused, hEvent(evPause, 1, "w1", ""), hEvent(evResume, 5, "w1", "")), "done work was discarded", ""},
		{"another worker frozen", recs(base, again),
			with(refused, hEvent(evPause, 45, "w2", ""), hEvent(evResume, 115, "w2", "")), "done work was discarded", ""},
		{"frozen only after the refusal", recs(base, again),
			with(refused, hEvent(evPause, 130, "w1", ""), hEvent(evResume, 150, "w1", "")), "done work was discarded", ""},
		{"links cut while it held the attempt", recs(base, again),
			with(refused, hEvent(evCutOn, 42, "w1", ""), hEvent(evCutOff, 95, "w1", "")), "", excuseCut},
		{"crashed for good once the report was kept", recs(base, again),
			with(run, hEvent(evCrash, 60, "w1", "")), "", excuseCrash},
		{"a report in memory lost to a restart", recs(base, again),
			[]event{hEvent(evRunEnd, 40, "w1", "a1"), hEvent(evRestart, 45, "w1", "")}, "", excuseRestart},
		{"a restart once the report was kept excuses nothing", recs(base, again),
			with(refused, hEvent(evRestart, 45, "w1", "")), "done work was discarded", ""},
		{"a quorum loss excuses nothing (the report waits, then is refused)", recs(base, again),
			with(run, hSettled(3000, "w1", "a1", string(api.CodeStaleAttempt))), "done work was discarded", ""},
		{"report accepted, yet the task ran again", recs(base, again),
			with(accepted, hEvent(evPause, 45, "w1", ""), hEvent(evResume, 115, "w1", "")), "ran again after it was done", ""},
		{"a run that failed (exit 3) may run again", recs(base, again),
			[]event{{kind: evRunEnd, at: 40, worker: "w1", task: "t", attempt: "a1", exit: 3}, hSettled(120, "w1", "a1", string(api.CodeStaleAttempt))}, "", ""},
		{"the next attempt started before the run ended", recs(base, []record{hAcquire("t", "a2", "w2", 2, 25, 26), hCall(opStart, "t", "a2", "w2", 30, "")}),
			with(refused, hEvent(evCutOn, 12, "w1", ""), hEvent(evCutOff, 28, "w1", "")), "", excuseCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, tally := checkDoneWork(tc.recs, tc.events)
			if tc.want == "" && len(p) > 0 {
				t.Fatalf("problems reported: %q", p)
			}
			if tc.want != "" && (len(p) != 1 || !strings.Contains(p[0], tc.want)) {
				t.Fatalf("want one problem with %q, got %q", tc.want, p)
			}
			total := 0
			for _, n := range tally.excused {
				total += n
			}
			switch {
			case tc.excuse == "" && total > 0:
				t.Errorf("excuses counted: %v", tally.excused)
			case tc.excuse != "" && (total != 1 || tally.excused[tc.excuse] != 1):
				t.Errorf("excuses counted: %v, want %s=1", tally.excused, tc.excuse)
			}
		})
	}
}

func TestDoneWorkTally(t *testing.T) {
	recs := []record{hAcquire("t", "a1", "w1", 1, 0, 10), hCall(opStart, "t", "a1", "w1", 20, "")}
	events := []event{hEvent(evRunEnd, 40, "w1", "a1"), hEvent(evKept, 41, "w1", "a1"), hSettled(50, "w1", "a1", "accepted"),
		hSettled(60, "w1", "x", string(api.CodeNotClaimed))}
	p, tally := checkDoneWork(recs, events)
	if len(p) > 0 || tally.runs != 1 || tally.kept != 1 || tally.accepted != 1 || tally.refused != 1 {
		t.Errorf("problems %q, tally %+v", p, tally)
	}
}

func TestSupersededReports(t *testing.T) {
	a1 := hAcquire("t", "a1", "w1", 1, 0, 10)
	a2 := hAcquire("t", "a2", "w2", 2, 50, 60)
	for _, tc := range []struct {
		name string
		recs []record
		bad  bool
	}{
		{"a finish accepted before the next attempt", []record{a1, hCall(opFinish, "t", "a1", "w1", 40, ""), a2}, false},
		{"a finish accepted after the next attempt was handed out", []record{a1, a2, hCall(opFinish, "t", "a1", "w1", 70, "")}, true},
		{"a fail accepted after the next attempt was handed out", []record{a1, a2, hCall(opFail, "t", "a1", "w1", 70, "")}, true},
		{"a late finish refused as stale", []record{a1, a2, hCall(opFinish, "t", "a1", "w1", 70, api.CodeStaleAttempt)}, false},
		{"a late finish refused as not claimed", []record{a1, a2, hCall(opFinish, "t", "a1", "w1", 70, api.CodeNotClaimed)}, false},
		{"the later attempt's own finish", []record{a1, a2, hCall(opFinish, "t", "a2", "w2", 70, "")}, false},
		{"an earlier attempt handed out before", []record{a1, a2, hCall(opFinish, "t", "a2", "w2", 5, "")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := checkSuperseded(tc.recs)
			if got := len(p) > 0; got != tc.bad {
				t.Errorf("flagged %v, want %v: %q", got, tc.bad, p)
			}
		})
	}
}
