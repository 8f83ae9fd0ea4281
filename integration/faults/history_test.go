package faults

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// never is the return time of an operation whose outcome is unknown: it
// may take effect at any point after its call.
const never = int64(math.MaxInt64)

// record is one client- or worker-visible operation: what was asked, how
// it ended, and when it was called and returned, in nanoseconds of the
// monotonic clock since the schedule began.
type record struct {
	client int
	in     opInput
	out    opOutput
	call   int64
	ret    int64
	ended  bool
	// drop marks a record that says nothing the model checks (an acquire
	// answered with no task).
	drop bool
	// err is the error text of an unexpected refusal, for the report.
	err string
	// sends lists the requests the client sent for the operation.
	sends []send
}

func (r record) trace() string {
	parts := make([]string, len(r.sends))
	for i, s := range r.sends {
		parts[i] = s.String()
	}
	return strings.Join(parts, "; ")
}

// evKind is a kind of event: something a simulated worker did or
// underwent besides its calls, for the checks that the history of calls
// alone cannot decide (done work that ran again).
type evKind uint8

const (
	evRunEnd  evKind = iota // an attempt's task process ended, with exit
	evKept                  // its report (finish or fail) was kept: in the spool
	evSettled               // a coordinator settled it: verdict
	evPause                 // the worker was frozen
	evResume                // and thawed (or restarted)
	evCutOn                 // its HTTP links to every coordinator were cut
	evCutOff                // and restored
	evCrash                 // it crashed for good
	evRestart               // it was restarted, forgetting what it held in memory
)

var evNames = [...]string{"run-end", "kept", "settled", "pause", "resume", "cut", "uncut", "crash", "restart"}

func (k evKind) String() string { return evNames[k] }

// event is one such thing, at a time of the recorder's clock.
type event struct {
	at      int64
	kind    evKind
	worker  string
	task    string
	attempt string
	exit    int
	fail    bool
	// verdict (settled): "accepted", or the code of the refusal.
	verdict string
}

// recorder collects the history of one schedule. Its clock is monotonic:
// time.Since reads the monotonic reading of its epoch.
type recorder struct {
	epoch time.Time

	mu      sync.Mutex
	records []*record
	events  []event
}

// note records an event now.
func (r *recorder) note(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.at = r.now()
	r.events = append(r.events, e)
}

// eventsSnapshot copies the events.
func (r *recorder) eventsSnapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func newRecorder() *recorder { return &recorder{epoch: time.Now()} }

func (r *recorder) now() int64 { return int64(time.Since(r.epoch)) }

// begin records the call of an operation.
func (r *recorder) begin(client int, in opInput) *record {
	rec := &record{client: client, in: in, ret: -1}
	r.mu.Lock()
	rec.call = r.now()
	r.records = append(r.records, rec)
	r.mu.Unlock()
	return rec
}

// end records its return.
func (r *recorder) end(rec *record, out opOutput) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec.ret = r.now()
	rec.out = out
	rec.ended = true
}

// update changes a record under the recorder's lock (an acquire learns its
// task only from its answer).
func (r *recorder) update(rec *record, f func(*record)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(rec)
}

// snapshot copies the records.
func (r *recorder) snapshot() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]record, len(r.records))
	for i, rec := range r.records {
		out[i] = *rec
	}
	return out
}

// definite lists the refusals whose meaning is certain: the state machine
// (or the leader's replica in its place) decided them. Any other failure
// (a transport error, a timeout, no_leader or not_leader after the
// client's retries, an internal error) leaves the outcome unknown: the
// write may have been committed even though its answer was lost.
var definite = []api.Code{api.CodeStaleAttempt, api.CodeNotClaimed, api.CodeWrongClaimant, api.CodeConflict, api.CodeNotFound}

// expectedUnknown lists the codes that only say the cluster was not able
// to answer at the time; anything else is an unexpected refusal.
var expectedUnknown = []api.Code{api.CodeNoLeader, api.CodeNotLeader}

// outcome classifies the error of a call; unexpected is set for a refusal
// neither definite nor a sign of the faults.
func outcome(err error) (out opOutput, unexpected string) {
	if err == nil {
		return opOutput{}, ""
	}
	var e *api.Error
	if errors.As(err, &e) {
		if slices.Contains(definite, e.Code) {
			return opOutput{Code: e.Code}, ""
		}
		if !slices.Contains(expectedUnknown, e.Code) {
			return opOutput{Unknown: true}, string(e.Code) + ": " + e.Message
		}
	}
	// A transport error, or the caller's deadline.
	return opOutput{Unknown: true}, ""
}

// history is a schedule's records turned into porcupine operations, one
// partition per task.
type history struct {
	byTask map[string][]porcupine.Operation
	// unexpected lists refusals neither definite nor caused by faults.
	unexpected []string
	ops        int
	// resent lists the calls that the client sent again after an answer
	// that left their outcome unknown, and that got a definite answer.
	resent []record
}

// Levels of a history. A call is what the caller of sdk/client sees: one
// operation however many requests the client sent for it. A request is
// what a coordinator sees: when the client sent a write again after an
// answer that left its outcome unknown, that earlier request is an
// operation of its own, with an unknown outcome, and the answered call is
// an operation from its last request on. An acquire stays one operation
// at both levels: its request id makes every request of a call one
// operation in the protocol, and a resend may be answered with what the
// first request assigned. A start is split at both levels: the protocol
// makes it safe to repeat (starting a running attempt changes nothing),
// and its resend answers for the state it finds, so a first request that
// landed before the attempt lapsed and a resend told stale_attempt are
// two operations, not one.
const (
	byCall = iota
	byRequest
)

// buildHistory partitions the records by task. keyTask maps each job's
// idempotency key to its task id, learnt from the submits that returned.
func buildHistory(recs []record, keyTask map[string]string, level int) history {
	h := history{byTask: map[string][]porcupine.Operation{}}
	add := func(task string, rec record, in opInput, out opOutput, call, ret int64) {
		in.Task = task
		h.byTask[task] = append(h.byTask[task], porcupine.Operation{ClientId: rec.client, Input: in, Call: call, Output: out, Return: ret, Metadata: rec.trace()})
		h.ops++
	}
	for _, rec := range recs {
		if rec.err != "" {
			h.unexpected = append(h.unexpected, fmt.Sprintf("%s: %s (sent: %s)", describe(rec.in, rec.out), rec.err, rec.trace()))
		}
		if rec.drop {
			continue
		}
		ret := rec.ret
		if !rec.ended || rec.out.Unknown {
			rec.out = opOutput{Unknown: true}
			ret = never
		}
		task := rec.in.Task
		if rec.in.Kind == opCreate {
			t, ok := keyTask[rec.in.Key]
			if !ok {
				continue // never acknowledged: no operation of it can be told apart
			}
			task = t
		}
		if task == "" || (rec.out.Unknown && (rec.in.Kind == opAcquire || rec.in.Kind == opRead)) {
			// An acquire that named no task is a ghost, if it assigned
			// anything; a read changes nothing.
			continue
		}
		call := rec.call
		if !rec.out.Unknown && rec.in.Kind != opAcquire && len(rec.sends) > 1 {
			earlier := rec.sends[:len(rec.sends)-1]
			for _, s := range earlier {
				if s.ambiguous {
					h.resent = append(h.resent, rec)
					break
				}
			}
			if level == byRequest || rec.in.Kind == opStart {
				for _, s := range earlier {
					if s.ambiguous && rec.in.Kind != opRead {
						add(task, rec, rec.in, opOutput{Unknown: true}, s.at, never)
					}
				}
				call = max(call, rec.sends[len(rec.sends)-1].at)
			}
		}
		if rec.in.Kind != opCreate {
			add(task, rec, rec.in, rec.out, call, ret)
			continue
		}
		add(task, rec, rec.in, opOutput{Unknown: rec.out.Unknown}, call, ret)
		if !rec.out.Unknown {
			// The answer is the job as it was when this request was
			// served, which, for a submit under a known idempotency key,
			// may follow other operations on the job.
			read := rec.in
			read.Kind = opRead
			add(task, rec, read, rec.out, call, ret)
		}
	}
	return h
}

// violation is a task whose history is not linearizable.
type violation struct {
	task   string
	result porcupine.CheckResult
	report string
	info   porcupine.LinearizationInfo
	ops    []porcupine.Operation
}

// checkLinearizable checks every task's history against the model.
func checkLinearizable(h history, timeout time.Duration) []violation {
	var out []violation
	tasks := make([]string, 0, len(h.byTask))
	for t := range h.byTask {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	for _, task := range tasks {
		ops := h.byTask[task]
		res, info := porcupine.CheckOperationsVerbose(taskModel, ops, timeout)
		if res == porcupine.Ok {
			continue
		}
		out = append(out, violation{task: task, result: res, info: info, ops: ops, report: explain(ops, info)})
	}
	return out
}

// explain renders a task's history, by call time, and the longest prefix
// of it the checker could linearize, with the states that prefix leads to.
func explain(ops []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var b strings.Builder
	sorted := slices.Clone(ops)
	slices.SortStableFunc(sorted, func(a, c porcupine.Operation) int { return compareInt(a.Call, c.Call) })
	b.WriteString("history (call..return in ms since the schedule began; inf: outcome unknown):\n")
	for _, op := range sorted {
		fmt.Fprintf(&b, "  [%9s .. %9s] c%-2d %s\n", ms(op.Call), ms(op.Return), op.ClientId, describe(op.Input.(opInput), op.Output.(opOutput)))
		if tr, _ := op.Metadata.(string); tr != "" && op.Input.(opInput).Kind != opRead {
			fmt.Fprintf(&b, "      sent: %s\n", tr)
		}
	}
	var longest []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	fmt.Fprintf(&b, "longest linearizable prefix (%d of %d operations):\n", len(longest), len(ops))
	states := []mTask{{}}
	for _, op := range longest {
		var next []mTask
		for _, s := range states {
			next = append(next, step(s, op.Input.(opInput), op.Output.(opOutput))...)
		}
		states = dedup(next)
		fmt.Fprintf(&b, "  %s\n      => %s\n", describe(op.Input.(opInput), op.Output.(opOutput)), statesString(states))
	}
	return b.String()
}

func dedup(states []mTask) []mTask {
	seen := map[string]bool{}
	var out []mTask
	for _, s := range states {
		if k := s.key(); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}

func statesString(states []mTask) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = s.String()
	}
	return "{" + strings.Join(parts, " | ") + "}"
}

func ms(t int64) string {
	if t == never {
		return "inf"
	}
	return fmt.Sprintf("%.1f", float64(t)/1e6)
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
