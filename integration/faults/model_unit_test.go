package faults

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// These tests pin the model down on small hand-written histories: each
// legal one must pass and each illegal one must be refused, so that the
// campaign's checker is neither blind nor a source of false alarms.

type hb struct {
	ops []porcupine.Operation
	t   int64
}

// seq appends an operation that runs alone, after every earlier one.
func (h *hb) seq(in opInput, out opOutput) {
	h.t += 10
	h.ops = append(h.ops, porcupine.Operation{Input: in, Output: out, Call: h.t, Return: h.t + 5})
	h.t += 5
}

// open appends an operation whose outcome is unknown, called now.
func (h *hb) open(in opInput) {
	h.t += 10
	h.ops = append(h.ops, porcupine.Operation{Input: in, Output: opOutput{Unknown: true}, Call: h.t, Return: never})
}

func intp(i int) *int { return &i }

func view(state string, attempts ...obsAttempt) *obsTask {
	o := &obsTask{JobState: jobStateOf(state), State: state, Attempts: attempts}
	if n := len(attempts); n > 0 && state != api.TaskPending {
		o.AttemptID, o.WorkerID = attempts[n-1].ID, attempts[n-1].Worker
	}
	return o
}

func finished(state string, exit int, by string, attempts ...obsAttempt) *obsTask {
	o := view(state, attempts...)
	o.ExitCode, o.SubmittedBy = intp(exit), by
	return o
}

func at(id, worker, state string) obsAttempt { return obsAttempt{ID: id, Worker: worker, State: state} }

func create(max int) opInput { return opInput{Kind: opCreate, Key: "k", MaxAttempts: max} }
func read() opInput          { return opInput{Kind: opRead} }
func acq(w, a string) opInput {
	return opInput{Kind: opAcquire, Worker: w, Attempt: a, Request: "r-" + a}
}
func start(w, a string) opInput { return opInput{Kind: opStart, Worker: w, Attempt: a} }
func finish(w, a string, exit int) opInput {
	return opInput{Kind: opFinish, Worker: w, Attempt: a, ExitCode: exit, Submission: a + "-finish"}
}
func cancelOp() opInput { return opInput{Kind: opCancel} }
func ok() opOutput      { return opOutput{} }
func code(c api.Code) opOutput {
	return opOutput{Code: c}
}
func got(n int) opOutput        { return opOutput{Number: n} }
func shows(v *obsTask) opOutput { return opOutput{View: v} }
func linearizable(h *hb) bool   { return porcupine.CheckOperations(taskModel, h.ops) }
func checkTimeout(h *hb) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(taskModel, h.ops, 5*time.Second)
}

func TestModelLegalHistories(t *testing.T) {
	cases := map[string]func(h *hb){
		"run to success": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(read(), shows(view(api.TaskPending)))
			h.seq(acq("w1", "a1"), got(1))
			h.seq(start("w1", "a1"), ok())
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			// A resent finish gets the stored answer.
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(read(), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(cancelOp(), code(api.CodeConflict))
		},
		"lapsed attempt finishes late": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(start("w1", "a1"), ok())
			h.seq(acq("w2", "a2"), got(2))
			h.seq(finish("w1", "a1", 0), code(api.CodeStaleAttempt))
			h.seq(start("w2", "a2"), ok())
			h.seq(finish("w2", "a2", 0), shows(finished(api.TaskSucceeded, 0, "w2", at("a1", "w1", api.AttemptLost), at("a2", "w2", api.TaskSucceeded))))
		},
		"ghost attempts are shown later": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w2", "a3"), got(3))
			h.seq(read(), shows(view(api.TaskAssigned, at("g1", "w1", api.AttemptLost), at("g2", "w1", api.AttemptLost), at("a3", "w2", api.TaskAssigned))))
		},
		"unknown finish took effect": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.open(finish("w1", "a1", 0))
			h.seq(read(), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
		},
		"unknown finish did not": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.open(finish("w1", "a1", 0))
			h.seq(read(), shows(view(api.TaskPending, at("a1", "w1", api.AttemptLost))))
		},
		"unknown cancel after a ghost": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.open(cancelOp())
			v := view(api.TaskAssigned, at("a1", "w1", api.AttemptLost), at("g", "w2", api.TaskAssigned))
			v.Cancel = true
			h.seq(read(), shows(v))
			v2 := view(api.TaskCancelled, at("a1", "w1", api.AttemptLost), at("g", "w2", api.AttemptLost))
			v2.Cancel = true
			h.seq(read(), shows(v2))
		},
		"cancel of a running task": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(start("w1", "a1"), ok())
			v := view(api.TaskRunning, at("a1", "w1", api.TaskRunning))
			v.Cancel = true
			h.seq(cancelOp(), shows(v))
			f := finished(api.TaskCancelled, 143, "w1", at("a1", "w1", api.TaskCancelled))
			f.Cancel = true
			h.seq(finish("w1", "a1", 143), shows(f))
		},
		"last attempt lapses": func(h *hb) {
			h.seq(create(1), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(finish("w1", "a1", 0), code(api.CodeStaleAttempt))
			h.seq(read(), shows(view(api.TaskFailed, at("a1", "w1", api.AttemptLost))))
		},
		"fail requeues": func(h *hb) {
			h.seq(create(2), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(opInput{Kind: opFail, Worker: "w1", Attempt: "a1"}, shows(view(api.TaskPending, at("a1", "w1", api.TaskFailed))))
			h.seq(finish("w1", "a1", 0), code(api.CodeStaleAttempt))
			h.seq(acq("w2", "a2"), got(2))
		},
		"concurrent acquire and read": func(h *hb) {
			h.seq(create(3), ok())
			h.ops = append(h.ops,
				porcupine.Operation{Input: acq("w1", "a1"), Output: got(1), Call: 100, Return: 300},
				porcupine.Operation{Input: read(), Output: shows(view(api.TaskAssigned, at("a1", "w1", api.TaskAssigned))), Call: 150, Return: 200})
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			h := &hb{}
			build(h)
			if res := checkTimeout(h); res != porcupine.Ok {
				var info porcupine.LinearizationInfo
				_, info = porcupine.CheckOperationsVerbose(taskModel, h.ops, 5*time.Second)
				t.Fatalf("legal history refused (%v):\n%s", res, explain(h.ops, info))
			}
		})
	}
}

func TestModelIllegalHistories(t *testing.T) {
	cases := map[string]func(h *hb){
		"fencing: an old attempt finishes after a new one was handed out": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(acq("w2", "a2"), got(2))
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded), at("a2", "w2", api.TaskAssigned))))
		},
		"two finishes accepted": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(acq("w2", "a2"), got(2))
		},
		"acknowledged finish lost": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(read(), shows(view(api.TaskPending, at("a1", "w1", api.AttemptLost))))
		},
		"state goes back": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(start("w1", "a1"), ok())
			h.seq(read(), shows(view(api.TaskAssigned, at("a1", "w1", api.TaskAssigned))))
		},
		"cancel refused on a live task": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(cancelOp(), code(api.CodeConflict))
			// Ghosts could have used up every attempt; the read says none
			// was made.
			h.seq(read(), shows(view(api.TaskPending)))
		},
		"cancelled task handed out": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(cancelOp(), shows(view(api.TaskCancelled)))
			h.seq(acq("w1", "a1"), got(1))
		},
		"replay answered differently": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(finish("w1", "a1", 0), shows(finished(api.TaskSucceeded, 0, "w1", at("a1", "w1", api.TaskSucceeded))))
			h.seq(finish("w1", "a1", 0), code(api.CodeNotClaimed))
		},
		"attempt number skips past max attempts": func(h *hb) {
			h.seq(create(2), ok())
			h.seq(acq("w1", "a3"), got(3))
		},
		"stale answer for the current attempt": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(finish("w1", "a1", 0), code(api.CodeStaleAttempt))
			h.seq(read(), shows(view(api.TaskAssigned, at("a1", "w1", api.TaskAssigned))))
		},
		"a ghost that ran": func(h *hb) {
			h.seq(create(3), ok())
			h.seq(read(), shows(view(api.TaskRunning, at("g", "w1", api.TaskRunning))))
		},
		"read before the create": func(h *hb) {
			h.seq(read(), shows(view(api.TaskPending)))
			h.seq(create(3), ok())
		},
		"last attempt lapses yet the task is requeued": func(h *hb) {
			h.seq(create(1), ok())
			h.seq(acq("w1", "a1"), got(1))
			h.seq(read(), shows(view(api.TaskPending, at("a1", "w1", api.AttemptLost))))
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			h := &hb{}
			build(h)
			if linearizable(h) {
				t.Fatalf("illegal history accepted:\n%s", explain(h.ops, porcupine.LinearizationInfo{}))
			}
		})
	}
}
