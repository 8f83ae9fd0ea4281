package faults

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The model is a sequential specification of one task, the unit the
// history is partitioned by (every job of the campaign has one task, so a
// task's partition also holds its job's submit, read and cancel).
//
// The state mirrors what the coordinator's state machine keeps for a task
// (coordinator/state/tasks.go): the task state, whether the task still
// names its last attempt as its holder, the cancel flag, the exit code and
// finisher, the list of attempts with their states, and the answers stored
// under finish submission ids.
//
// Operations and their effects, each taken atomically at one point between
// the call and the return:
//
//   - create (POST /v1/jobs, idempotency key): creates the task, pending,
//     unless it exists. A submit that returned is split into a create and a
//     read over the same interval, because a resent submit is answered
//     with the job as it is at the resend, not as it was created.
//   - read (GET /v1/jobs/{id}): returns the task as it is.
//   - acquire (POST /v1/workers/self/acquire) that returned this task: the
//     task was pending with Attempt-1 attempts; a new attempt, assigned to
//     the worker, becomes current. Every call made under one request id is
//     one operation, from the first call to the answer.
//   - start, logs, finish, fail (POST /v1/tasks/{id}/...): the claim check
//     of the state machine decides between wrong_claimant, not_claimed and
//     stale_attempt (claim below mirrors state.Store.claim). Start turns an
//     assigned attempt running. Finish ends the attempt and the task:
//     cancelled if a cancel was requested, else succeeded for exit code 0,
//     else failed; its answer is stored under its submission id and a
//     finish under a stored id gets that answer without any other check.
//     Fail ends the attempt as failed and requeues the task.
//   - cancel (POST /v1/jobs/{id}/cancel): conflict on an ended task; a
//     pending task is cancelled; an assigned or running one gets the
//     cancel flag.
//
// Transitions no client observes when they happen, and which may happen
// between any two operations:
//
//   - lose: the current attempt's lease lapses; the attempt is lost and the
//     task is requeued: cancelled if a cancel was requested, pending while
//     attempts remain (it then names no holder), else failed.
//   - ghost: a pending task is assigned to an attempt whose answer reached
//     nobody (an acquire whose caller gave up, or whose resend came after
//     the first assignment had lapsed, and so was answered anew). The id
//     and worker of such an attempt are unknown until a read shows them.
//
// These two only ever move a task forward, and from any state they form
// one chain (an active task can only lose, a pending one only be given a
// ghost), so the states reachable without an operation are enumerated as
// that chain and every operation is tried along it.
//
// An operation whose outcome is unknown (a transport error, a timeout, the
// caller crashed) is recorded with an unknown output and a return time of
// infinity: it may take effect at any point after its call, at any point
// of the chain, or never (the checker may place it after every other
// operation, where nothing observes it). The model is nondeterministic for
// such operations and porcupine's power-set construction tracks every
// state they may lead to. An acquire whose outcome is unknown names no
// task and is not checked; a ghost stands for what it may have done. A
// read with an unknown outcome changes nothing and is dropped.
//
// What the model does not allow: a read that shows an attempt or a state
// no operation and no lapse can explain, an attempt started or finished
// after it was lost or after another attempt was assigned (fencing), two
// finishes of different attempts accepted, a finish accepted and then not
// shown, a cancel flag or a cancelled task without a cancel, a replayed
// finish answered differently from the first, and every error code that
// the claim check would not give at any point the operation could take
// effect.

// opKind names an operation of the model.
type opKind uint8

const (
	opCreate opKind = iota
	opRead
	opAcquire
	opStart
	opLogs
	opFinish
	opFail
	opCancel
)

var opNames = [...]string{"create", "read", "acquire", "start", "logs", "finish", "fail", "cancel"}

func (k opKind) String() string { return opNames[k] }

// opInput is what an operation was asked to do.
type opInput struct {
	Kind opKind
	// Key is the job's idempotency key, the partition key until the task
	// id is known; Task is the task id.
	Key  string
	Task string
	// Worker, Attempt: the worker calling and the attempt it names (for
	// acquire, the attempt it was given).
	Worker  string
	Attempt string
	// Request is an acquire's request id.
	Request string
	// Submission and ExitCode are a finish's.
	Submission string
	ExitCode   int
	// Seq is a log chunk's sequence number.
	Seq int64
	// MaxAttempts is a create's job spec value.
	MaxAttempts int
}

// opOutput is how an operation ended.
type opOutput struct {
	// Unknown marks an operation whose outcome is not known.
	Unknown bool
	// Code is the protocol error code; "" for success.
	Code api.Code
	// View is the task as answered by read, finish, fail and cancel.
	View *obsTask
	// Number and Devices are an acquire's answer.
	Number  int
	Devices []string
}

// obsAttempt is an attempt as a client saw it.
type obsAttempt struct {
	ID     string
	Worker string
	State  string
}

// obsTask is the part of a task answer the model checks.
type obsTask struct {
	JobState    string
	State       string
	AttemptID   string
	WorkerID    string
	Cancel      bool
	ExitCode    *int
	SubmittedBy string
	Attempts    []obsAttempt
}

func observe(jobState string, t api.Task) *obsTask {
	o := &obsTask{JobState: jobState, State: t.State, AttemptID: t.AttemptID, WorkerID: t.WorkerID, Cancel: t.CancelRequested, ExitCode: t.ExitCode, SubmittedBy: t.SubmittedBy}
	for _, a := range t.Attempts {
		o.Attempts = append(o.Attempts, obsAttempt{ID: a.AttemptID, Worker: a.WorkerID, State: a.State})
	}
	return o
}

func (o *obsTask) String() string {
	if o == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", o.State)
	if o.Cancel {
		b.WriteString(" cancel-requested")
	}
	if o.ExitCode != nil {
		fmt.Fprintf(&b, " exit=%d by=%s", *o.ExitCode, o.SubmittedBy)
	}
	if o.AttemptID != "" {
		fmt.Fprintf(&b, " holder=%s@%s", short(o.AttemptID), o.WorkerID)
	}
	b.WriteString(" [")
	for i, a := range o.Attempts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "#%d %s@%s %s", i+1, short(a.ID), a.Worker, a.State)
	}
	b.WriteString("]")
	return b.String()
}

func short(id string) string {
	if len(id) > 6 {
		return id[:6]
	}
	if id == "" {
		return "?"
	}
	return id
}

// mAttempt is an attempt in the model; ID and Worker are "" for a ghost no
// read has shown yet.
type mAttempt struct {
	ID     string
	Worker string
	State  string
}

// mSub is a finish answer stored under a submission id.
type mSub struct {
	ID     string
	Answer mTask
}

// mTask is the model's state of one task. Values are never modified once
// made: every transition copies.
type mTask struct {
	Exists      bool
	MaxAttempts int
	State       string
	// Held: the task names its last attempt as its current attempt and
	// that attempt's worker as its holder (false once it is requeued, and
	// for a task never assigned, as in the state machine).
	Held        bool
	Cancel      bool
	ExitCode    int
	HasExit     bool
	SubmittedBy string
	Attempts    []mAttempt
	Subs        []mSub
}

func (t mTask) active() bool { return t.State == api.TaskAssigned || t.State == api.TaskRunning }

func (t mTask) terminal() bool {
	return t.State == api.TaskSucceeded || t.State == api.TaskFailed || t.State == api.TaskCancelled
}

// current is the attempt the task names, if it names one.
func (t mTask) current() (mAttempt, bool) {
	if !t.Held || len(t.Attempts) == 0 {
		return mAttempt{}, false
	}
	return t.Attempts[len(t.Attempts)-1], true
}

func (t mTask) clone() mTask {
	t.Attempts = slices.Clone(t.Attempts)
	t.Subs = slices.Clone(t.Subs)
	return t
}

func (t mTask) setLast(state string) mTask {
	t = t.clone()
	t.Attempts[len(t.Attempts)-1].State = state
	return t
}

// requeueOrEnd is state.Store.requeueOrEnd: after an attempt ended
// abnormally (lost or failed).
func (t mTask) requeueOrEnd() mTask {
	switch {
	case t.Cancel:
		t.State = api.TaskCancelled
	case len(t.Attempts) < t.MaxAttempts:
		t.State = api.TaskPending
		t.Held = false
	default:
		t.State = api.TaskFailed
	}
	return t
}

// lose is a lapsed lease.
func (t mTask) lose() mTask { return t.setLast(api.AttemptLost).requeueOrEnd() }

// assign gives a pending task a new attempt.
func (t mTask) assign(id, worker string) mTask {
	t = t.clone()
	t.Attempts = append(t.Attempts, mAttempt{ID: id, Worker: worker, State: api.TaskAssigned})
	t.State = api.TaskAssigned
	t.Held = true
	return t
}

// chain lists t and every state the unobserved transitions lead to from
// it, in order.
func (t mTask) chain() []mTask {
	out := []mTask{t}
	if !t.Exists {
		return out
	}
	for cur := t; len(out) < 4*max(t.MaxAttempts, 1)+4; {
		switch {
		case cur.active():
			cur = cur.lose()
		case cur.State == api.TaskPending:
			cur = cur.assign("", "")
		default:
			return out
		}
		out = append(out, cur)
	}
	return out
}

// claim mirrors state.Store.claim: the error codes a task write by worker
// under attempt may get in state t, or none when it is accepted. With a
// ghost holder (worker unknown) both answers it could give are allowed.
func (t mTask) claim(worker, attempt string) (codes []api.Code, ok bool) {
	if !t.Exists {
		return []api.Code{api.CodeNotFound}, false
	}
	cur, held := t.current()
	if !held || cur.ID != attempt || attempt == "" {
		for _, a := range t.Attempts {
			if a.ID == attempt && a.Worker == worker {
				return []api.Code{api.CodeStaleAttempt}, false
			}
		}
		switch {
		case t.active() && cur.Worker == "":
			return []api.Code{api.CodeWrongClaimant, api.CodeStaleAttempt}, false
		case t.active() && cur.Worker != worker:
			return []api.Code{api.CodeWrongClaimant}, false
		case !t.active():
			return []api.Code{api.CodeNotClaimed}, false
		}
		return []api.Code{api.CodeStaleAttempt}, false
	}
	if cur.Worker != worker {
		return []api.Code{api.CodeWrongClaimant}, false
	}
	if !t.active() {
		if cur.State == api.AttemptLost {
			return []api.Code{api.CodeStaleAttempt}, false
		}
		return []api.Code{api.CodeNotClaimed}, false
	}
	return nil, true
}

// apply performs a task write in state t: the codes it is refused with,
// or the state it leads to.
func (t mTask) apply(in opInput) (codes []api.Code, next mTask, ok bool) {
	switch in.Kind {
	case opCancel:
		switch {
		case !t.Exists:
			return []api.Code{api.CodeNotFound}, t, false
		case t.terminal():
			return []api.Code{api.CodeConflict}, t, false
		case t.State == api.TaskPending:
			t.State = api.TaskCancelled
		default:
			t.Cancel = true
		}
		return nil, t, true
	case opFinish:
		if in.Submission != "" {
			for _, s := range t.Subs {
				if s.ID == in.Submission {
					return nil, t, true // replayed: no effect
				}
			}
		}
	}
	codes, ok = t.claim(in.Worker, in.Attempt)
	if !ok {
		return codes, t, false
	}
	switch in.Kind {
	case opStart:
		if t.State == api.TaskAssigned {
			t = t.setLast(api.TaskRunning)
			t.State = api.TaskRunning
		}
	case opLogs:
	case opFail:
		t = t.setLast(api.TaskFailed).requeueOrEnd()
	case opFinish:
		state := api.TaskSucceeded
		switch {
		case t.Cancel:
			state = api.TaskCancelled
		case in.ExitCode != 0:
			state = api.TaskFailed
		}
		t = t.setLast(state)
		t.State = state
		t.ExitCode, t.HasExit = in.ExitCode, true
		t.SubmittedBy = in.Worker
		if in.Submission != "" {
			answer := t.clone()
			answer.Subs = nil
			t.Subs = append(t.Subs, mSub{ID: in.Submission, Answer: answer})
			slices.SortFunc(t.Subs, func(a, b mSub) int { return strings.Compare(a.ID, b.ID) })
		}
	default:
		panic("apply: " + in.Kind.String())
	}
	return nil, t, true
}

// match reports whether t, up to the ids and workers of its ghosts, is
// what o shows, and returns t with those filled in from o.
func (t mTask) match(o *obsTask) (mTask, bool) {
	if !t.Exists || o == nil || len(o.Attempts) != len(t.Attempts) {
		return t, false
	}
	if o.State != t.State || o.Cancel != t.Cancel || o.SubmittedBy != t.SubmittedBy || (o.ExitCode != nil) != t.HasExit || (t.HasExit && *o.ExitCode != t.ExitCode) {
		return t, false
	}
	if o.JobState != jobStateOf(t.State) {
		return t, false
	}
	filled := t.clone()
	for i, a := range o.Attempts {
		m := &filled.Attempts[i]
		if a.State != m.State {
			return t, false
		}
		if m.ID == "" {
			// A ghost: only ever assigned or lost, never started.
			if a.State != api.TaskAssigned && a.State != api.AttemptLost {
				return t, false
			}
			for _, b := range t.Attempts {
				if b.ID == a.ID {
					return t, false
				}
			}
			m.ID, m.Worker = a.ID, a.Worker
		} else if a.ID != m.ID || a.Worker != m.Worker {
			return t, false
		}
	}
	cur, held := filled.current()
	if held != (o.AttemptID != "") || (held && (o.AttemptID != cur.ID || o.WorkerID != cur.Worker)) {
		return t, false
	}
	if !held && o.WorkerID != "" {
		return t, false
	}
	return filled, true
}

// jobStateOf is the state of a one-task job whose task is in state s
// (state.deriveJobState).
func jobStateOf(s string) string {
	switch s {
	case api.TaskAssigned, api.TaskRunning:
		return api.TaskRunning
	}
	return s
}

// step is the model's nondeterministic step: every state the operation
// may lead to from t, given how it ended; none if it cannot end so.
func step(t mTask, in opInput, out opOutput) []mTask {
	switch in.Kind {
	case opCreate:
		if t.Exists {
			return []mTask{t}
		}
		return []mTask{{Exists: true, MaxAttempts: in.MaxAttempts, State: api.TaskPending}}
	case opRead:
		if out.Code == api.CodeNotFound {
			if t.Exists {
				return nil
			}
			return []mTask{t}
		}
		if out.Code != "" {
			return nil
		}
		for _, c := range t.chain() {
			if f, ok := c.match(out.View); ok {
				return []mTask{f}
			}
		}
		return nil
	case opAcquire:
		for _, c := range t.chain() {
			if c.State != api.TaskPending || len(c.Attempts) != out.Number-1 {
				continue
			}
			for _, a := range c.Attempts {
				if a.ID == in.Attempt {
					return nil
				}
			}
			return []mTask{c.assign(in.Attempt, in.Worker)}
		}
		return nil
	}
	if out.Unknown {
		// Any point of the chain, or no effect at all (t itself stands
		// for the states the chain reaches without the operation).
		next := []mTask{t}
		for _, c := range t.chain() {
			if _, n, ok := c.apply(in); ok {
				next = append(next, n)
			}
		}
		return next
	}
	if in.Kind == opFinish && in.Submission != "" {
		for _, s := range t.Subs {
			if s.ID == in.Submission {
				if out.Code != "" {
					return nil
				}
				if _, ok := s.Answer.match(out.View); !ok {
					return nil
				}
				return []mTask{t}
			}
		}
	}
	for _, c := range t.chain() {
		codes, n, ok := c.apply(in)
		if out.Code != "" {
			if !ok && slices.Contains(codes, out.Code) {
				return []mTask{c} // the first state that refuses so: the rest follow from it
			}
			continue
		}
		if !ok {
			continue
		}
		if out.View == nil {
			return []mTask{n}
		}
		if f, ok := n.match(out.View); ok {
			if in.Kind == opFinish && in.Submission != "" {
				// The stored answer is the one given: fill its ghosts too.
				for i := range f.Subs {
					if f.Subs[i].ID == in.Submission {
						f.Subs[i].Answer, _ = f.Subs[i].Answer.match(out.View)
					}
				}
			}
			return []mTask{f}
		}
	}
	return nil
}

func (t mTask) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v|%d|%s|%v|%v|%d|%v|%s|", t.Exists, t.MaxAttempts, t.State, t.Held, t.Cancel, t.ExitCode, t.HasExit, t.SubmittedBy)
	for _, a := range t.Attempts {
		fmt.Fprintf(&b, "%s/%s/%s,", a.ID, a.Worker, a.State)
	}
	for _, s := range t.Subs {
		fmt.Fprintf(&b, ";%s=%s", s.ID, s.Answer.key())
	}
	return b.String()
}

func (t mTask) String() string {
	if !t.Exists {
		return "absent"
	}
	var b strings.Builder
	b.WriteString(t.State)
	if t.Cancel {
		b.WriteString(" cancel-requested")
	}
	if t.HasExit {
		fmt.Fprintf(&b, " exit=%d by=%s", t.ExitCode, t.SubmittedBy)
	}
	fmt.Fprintf(&b, " max=%d [", t.MaxAttempts)
	for i, a := range t.Attempts {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "#%d %s@%s %s", i+1, short(a.ID), a.Worker, a.State)
	}
	b.WriteString("]")
	return b.String()
}

// taskModel is the porcupine model of one task's history.
var taskModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{mTask{}} },
	Step: func(state, input, output any) []any {
		next := step(state.(mTask), input.(opInput), output.(opOutput))
		out := make([]any, len(next))
		for i, n := range next {
			out[i] = n
		}
		return out
	},
	Equal: func(a, b any) bool { return a.(mTask).key() == b.(mTask).key() },
	Hash: func(s any) uint64 {
		h := fnv.New64a()
		h.Write([]byte(s.(mTask).key()))
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string { return describe(input.(opInput), output.(opOutput)) },
	DescribeState:     func(s any) string { return s.(mTask).String() },
}).ToModel()

// describe renders one operation for reports.
func describe(in opInput, out opOutput) string {
	var b strings.Builder
	b.WriteString(in.Kind.String())
	switch in.Kind {
	case opCreate:
		fmt.Fprintf(&b, "(%s, max_attempts=%d)", in.Key, in.MaxAttempts)
	case opRead, opCancel:
		fmt.Fprintf(&b, "(%s)", in.Task)
	case opAcquire:
		fmt.Fprintf(&b, "(%s, req=%s)", in.Worker, short(in.Request))
	case opStart, opFail:
		fmt.Fprintf(&b, "(%s, %s)", in.Worker, short(in.Attempt))
	case opLogs:
		fmt.Fprintf(&b, "(%s, %s, seq=%d)", in.Worker, short(in.Attempt), in.Seq)
	case opFinish:
		fmt.Fprintf(&b, "(%s, %s, exit=%d, sub=%s)", in.Worker, short(in.Attempt), in.ExitCode, in.Submission)
	}
	b.WriteString(" -> ")
	switch {
	case out.Unknown:
		b.WriteString("unknown")
	case out.Code != "":
		b.WriteString(string(out.Code))
	case in.Kind == opAcquire:
		fmt.Fprintf(&b, "%s #%d %s devices=%v", in.Task, out.Number, short(in.Attempt), out.Devices)
	case out.View != nil:
		b.WriteString(out.View.String())
	default:
		b.WriteString("ok")
	}
	return b.String()
}
