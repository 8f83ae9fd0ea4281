package faults

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Done work stays done, and a superseded attempt's report is never taken.
// These checks read the whole history of a schedule: its calls and the
// simulated workers' events (a run's end, a report kept or settled, a
// freeze, cut links, a crash, a restart).

// Why done work may be discarded: the fault that struck the worker of the
// attempt while it held the attempt. Nothing else excuses it.
const (
	// excuseRestart: the worker was restarted after the run ended and
	// before its report was kept (the report was in memory only).
	excuseRestart = "restart-before-kept"
	// excuseFreeze: the worker was frozen while it held the attempt, so
	// its heartbeats stopped and the lease lapsed.
	excuseFreeze = "freeze"
	// excuseCut: its HTTP links to every coordinator were cut meanwhile,
	// with the same effect.
	excuseCut = "links-cut"
	// excuseCrash: it crashed for good, its reports with it.
	excuseCrash = "crash"
)

// doneTally counts what checkDoneWork saw.
type doneTally struct {
	runs     int // runs that ended with exit 0
	kept     int // of those, whose report was kept
	accepted int // of those, whose report was accepted
	// excused counts the runs ended with 0 whose work was discarded
	// (their report refused, or the task run again), by the fault that
	// explains it.
	excused map[string]int
	// refused counts the reports, of any end, refused for good (the
	// attempt had been superseded: stale_attempt, not_claimed).
	refused int
}

func (d *doneTally) add(o doneTally) {
	d.runs += o.runs
	d.kept += o.kept
	d.accepted += o.accepted
	d.refused += o.refused
	for k, n := range o.excused {
		if d.excused == nil {
			d.excused = map[string]int{}
		}
		d.excused[k] += n
	}
}

func (d doneTally) String() string {
	ex := "none"
	if len(d.excused) > 0 {
		ex = counts(d.excused)
	}
	return fmt.Sprintf("%d runs ended with 0, %d reports kept, %d accepted; discarded or run again, excused: %s; %d reports refused as superseded", d.runs, d.kept, d.accepted, ex, d.refused)
}

// workerFaults is what struck one worker, on the recorder's clock.
type workerFaults struct {
	pauses   [][2]int64 // frozen; an open one ends at never
	cuts     [][2]int64 // links cut
	crash    int64      // crashed for good; -1: never
	restarts []int64
}

func (w *workerFaults) open(list *[][2]int64, at int64) { *list = append(*list, [2]int64{at, never}) }

func (w *workerFaults) close(list [][2]int64, at int64) {
	if n := len(list); n > 0 && list[n-1][1] == never {
		list[n-1][1] = at
	}
}

func overlaps(ivs [][2]int64, from, to int64) bool {
	for _, iv := range ivs {
		if iv[0] <= to && iv[1] >= from {
			return true
		}
	}
	return false
}

// checkDoneWork checks that done work never runs again, nor is thrown
// away. A run that ended with exit 0 (its task's process succeeded) must
// have its report accepted, and no other attempt of its task may start
// after it ended, unless a fault on its worker explains the loss: the
// worker restarted before the report was kept (a report in memory only is
// lost with the process), or it was frozen, cut off from every
// coordinator, or crashed for good while it held the attempt (from the
// acquire that handed it out to the refusal of its report or the start of
// the next attempt): the lease lapsed, and the coordinators cannot tell a
// silent worker from a dead one. An outage of the coordinators is no
// excuse: the report waits in the spool and the heartbeats name its task
// until a leader takes it, and a new leader gives every lease a fresh
// grace. Nor is a restart once the report was kept. An accepted report
// excuses nothing: its task must never run again.
func checkDoneWork(recs []record, events []event) ([]string, doneTally) {
	var out []string
	tally := doneTally{excused: map[string]int{}}
	acquired := map[string]int64{} // attempt -> return of the acquire that handed it out
	type start struct {
		attempt string
		call    int64
	}
	starts := map[string][]start{} // task -> accepted starts
	for _, r := range recs {
		if !r.ended || r.out.Unknown || r.out.Code != "" || r.drop {
			continue
		}
		switch r.in.Kind {
		case opAcquire:
			if r.in.Attempt != "" {
				acquired[r.in.Attempt] = r.ret
			}
		case opStart:
			starts[r.in.Task] = append(starts[r.in.Task], start{r.in.Attempt, r.call})
		}
	}
	for _, ss := range starts {
		sort.Slice(ss, func(i, k int) bool { return ss[i].call < ss[k].call })
	}
	workers := map[string]*workerFaults{}
	wf := func(w string) *workerFaults {
		if workers[w] == nil {
			workers[w] = &workerFaults{crash: -1}
		}
		return workers[w]
	}
	kept := map[string]event{}
	settled := map[string]event{}
	var ends []event
	for _, e := range events {
		w := wf(e.worker)
		switch e.kind {
		case evRunEnd:
			if e.exit == 0 && !e.fail {
				ends = append(ends, e)
			}
		case evKept:
			if _, ok := kept[e.attempt]; !ok {
				kept[e.attempt] = e
			}
		case evSettled:
			settled[e.attempt] = e
			if e.verdict != "accepted" {
				tally.refused++
			}
		case evPause:
			w.open(&w.pauses, e.at)
		case evResume:
			w.close(w.pauses, e.at)
		case evCutOn:
			w.open(&w.cuts, e.at)
		case evCutOff:
			w.close(w.cuts, e.at)
		case evCrash:
			if w.crash < 0 {
				w.crash = e.at
			}
		case evRestart:
			w.restarts = append(w.restarts, e.at)
		}
	}
	for _, e := range ends {
		tally.runs++
		k, isKept := kept[e.attempt]
		st, isSettled := settled[e.attempt]
		accepted := isSettled && st.verdict == "accepted"
		if isKept {
			tally.kept++
		}
		if accepted {
			tally.accepted++
		}
		var again *start
		for i, s := range starts[e.task] {
			if s.attempt != e.attempt && s.call > e.at {
				again = &starts[e.task][i]
				break
			}
		}
		refused := isSettled && !accepted
		what := func() string {
			var parts []string
			if isKept {
				parts = append(parts, fmt.Sprintf("its report was kept at %s ms", ms(k.at)))
			} else {
				parts = append(parts, "its report was never kept")
			}
			if refused {
				parts = append(parts, fmt.Sprintf("refused (%s) at %s ms", st.verdict, ms(st.at)))
			}
			if accepted {
				parts = append(parts, fmt.Sprintf("accepted at %s ms", ms(st.at)))
			}
			if again != nil {
				parts = append(parts, fmt.Sprintf("attempt %s started the task again at %s ms", again.attempt, ms(again.call)))
			}
			return strings.Join(parts, ", ")
		}
		switch {
		case accepted && again != nil:
			out = append(out, fmt.Sprintf("task %s ran again after it was done: attempt %s on %s ended with 0 at %s ms, %s", e.task, e.attempt, e.worker, ms(e.at), what()))
			continue
		case again == nil && !refused:
			continue
		}
		// Discarded: whatever struck the worker between the assignment
		// and the refusal or the next start must explain it.
		from, to := acquired[e.attempt], int64(never)
		if refused {
			to = st.at
		}
		if again != nil {
			to = min(to, again.call)
		}
		w := wf(e.worker)
		excuse := ""
		switch {
		case !isKept && slices.ContainsFunc(w.restarts, func(at int64) bool { return at >= e.at && at <= to }):
			excuse = excuseRestart
		case w.crash >= 0 && w.crash >= from && w.crash <= to:
			excuse = excuseCrash
		case overlaps(w.pauses, from, to):
			excuse = excuseFreeze
		case overlaps(w.cuts, from, to):
			excuse = excuseCut
		}
		if excuse != "" {
			tally.excused[excuse]++
			continue
		}
		hi := "then"
		if to != never {
			hi = ms(to) + " ms"
		}
		out = append(out, fmt.Sprintf("task %s: done work was discarded: attempt %s on %s ended with 0 at %s ms, %s; no fault on %s explains it (no freeze, cut links or crash between its assignment at %s ms and %s, no restart before its report was kept)",
			e.task, e.attempt, e.worker, ms(e.at), what(), e.worker, ms(from), hi))
	}
	return out, tally
}

// checkSuperseded checks that no report of a superseded attempt is
// accepted: no finish or fail of an attempt is accepted when it was called
// after an acquire had handed out a later attempt of its task (the later
// attempt exists only once the earlier was lost or failed).
func checkSuperseded(recs []record) []string {
	type handout struct {
		attempt string
		number  int
		ret     int64
	}
	number := map[string]int{}
	handed := map[string][]handout{} // task -> attempts handed out
	for _, r := range recs {
		if r.in.Kind != opAcquire || r.in.Attempt == "" || !r.ended || r.out.Unknown || r.drop {
			continue
		}
		number[r.in.Attempt] = r.out.Number
		handed[r.in.Task] = append(handed[r.in.Task], handout{r.in.Attempt, r.out.Number, r.ret})
	}
	var out []string
	for _, r := range recs {
		if (r.in.Kind != opFinish && r.in.Kind != opFail) || !r.ended || r.out.Unknown || r.out.Code != "" || r.drop {
			continue
		}
		n, ok := number[r.in.Attempt]
		if !ok {
			n = math.MaxInt // an attempt no acquire handed out: none is later
		}
		for _, h := range handed[r.in.Task] {
			if h.attempt != r.in.Attempt && h.number > n && h.ret < r.call {
				out = append(out, fmt.Sprintf("task %s: the %s of attempt %s (#%d) by %s was accepted (called at %s ms) after attempt %s (#%d) had been handed out at %s ms: a superseded attempt's report was taken",
					r.in.Task, r.in.Kind, r.in.Attempt, n, r.in.Worker, ms(r.call), h.attempt, h.number, ms(h.ret)))
				break
			}
		}
	}
	return out
}
