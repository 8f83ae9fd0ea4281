package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// The states of a task, and the attempt states only an attempt takes.
// They are the protocol's words (the state's vocab_test.go checks them).
const (
	TaskPending   = "pending"
	TaskAssigned  = "assigned"
	TaskRunning   = "running"
	TaskSucceeded = "succeeded"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
	AttemptLost   = "lost"
	// AttemptPreempted: stopped by a drain's deadline, a stop or a
	// preemption; such an attempt does not count against the task's max
	// attempts.
	AttemptPreempted = "preempted"
)

// MaxGPUFaultRetries is how many attempts of a task lost to a GPU fault
// are free (AttemptsUsed): an agent could otherwise claim faults forever
// to keep a task from ever failing. The protocol's
// api.MaxGPUFaultRetries.
const MaxGPUFaultRetries = 3

// Task is one unit of a job.
type Task struct {
	ID             string          `json:"id"`
	JobID          string          `json:"job_id"`
	Index          int             `json:"index"`
	Seq            uint64          `json:"seq"`
	State          string          `json:"state"`
	AttemptID      string          `json:"attempt_id,omitempty"`
	WorkerID       string          `json:"worker_id,omitempty"`
	Devices        []string        `json:"devices,omitempty"`
	LeaseSeconds   int             `json:"lease_seconds"`
	LeaseExpiresAt time.Time       `json:"lease_expires_at,omitzero"`
	ExitCode       *int            `json:"exit_code,omitempty"`
	Output         json.RawMessage `json:"output,omitempty"`
	// Artifacts are the outputs the finish listed.
	Artifacts   []command.TaskArtifact `json:"artifacts,omitempty"`
	Reason      string                 `json:"reason,omitempty"`
	SubmittedBy string                 `json:"submitted_by,omitempty"`
	ExecutedBy  string                 `json:"executed_by,omitempty"`
	// Preempt, when set, says why the current attempt was asked to stop
	// by a drain or a stop: however it ends, it ends preempted and the
	// task is requeued without using up an attempt.
	Preempt string `json:"preempt,omitempty"`
	// Checkpoint is the task's latest checkpoint.
	Checkpoint *TaskCheckpoint `json:"checkpoint,omitempty"`
	Attempts   []Attempt       `json:"attempts,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	UpdatedAt  time.Time       `json:"updated_at"`
	LogBytes   int             `json:"log_bytes,omitempty"`
	LastLogSeq int64           `json:"last_log_seq"`

	// gen is the capture generation the task was last written in (Gen);
	// not part of the task's state.
	gen uint64

	// The flags sit together at the end, in one word: a task record is
	// 384 bytes, a size class of its own, not 400 (in the 416 class).

	CancelRequested bool `json:"cancel_requested,omitempty"`
	// LogCut is set once the coordinators' total output bound refused
	// this task's output: its marker is stored and the rest dropped.
	LogCut bool `json:"log_cut,omitempty"`
	// frozen is set once a remembered finish holds this very record (the
	// task as that finish left it): it is never changed again (Frozen).
	// Not part of the task's state.
	frozen bool
}

// TaskCheckpoint is a task's latest checkpoint and the attempt that
// uploaded it.
type TaskCheckpoint struct {
	SHA256    string `json:"sha256"`
	Size      int64  `json:"size"`
	Format    string `json:"format"`
	AttemptID string `json:"attempt_id"`
}

// Attempt is one assignment of a task.
type Attempt struct {
	ID         string    `json:"id"`
	Number     int       `json:"number"`
	WorkerID   string    `json:"worker_id"`
	State      string    `json:"state"`
	Devices    []string  `json:"devices,omitempty"`
	AssignedAt time.Time `json:"assigned_at"`
	StartedAt  time.Time `json:"started_at,omitzero"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Rendezvous is where a gang member's attempt said its peers reach
	// it; nil until it called rendezvous.
	Rendezvous *Endpoint `json:"rendezvous,omitempty"`
	// GPUFault names the GPU whose fault ended the attempt (lost), as its
	// agent reported it.
	GPUFault string `json:"gpu_fault,omitempty"`
	// Meter is what the attempt holds, per GPU model, in hundredths of a
	// GPU, where the leader that placed it meters; nil in attempts placed
	// before.
	Meter []MeterShare `json:"meter,omitempty"`
	// PreemptedBy names the task a preemption asked this attempt to stop
	// for, and when; nil where none did.
	PreemptedBy *Preemptor `json:"preempted_by,omitempty"`
	// Preflight is how the attempt's preflight went, as its agent
	// reported it with the start or the fail.
	Preflight *command.Preflight `json:"preflight,omitempty"`
}

// MeterShare is what one attempt holds of GPUs of one model, in
// hundredths of a GPU.
type MeterShare struct {
	Model string `json:"model"`
	Centi int64  `json:"centi"`
}

// Preemptor is the task a preemption was made for, and when it was made.
type Preemptor struct {
	JobID  string    `json:"job_id"`
	Team   string    `json:"team"`
	TaskID string    `json:"task_id"`
	At     time.Time `json:"at"`
}

// Endpoint is an address and port a gang member advertised.
type Endpoint struct {
	Address string `json:"address"`
	Port    int    `json:"port,omitempty"`
}

// Submission remembers a finish with a submission id: the digest of its
// body and the task as that finish left it, the outcome a replay yields.
// It is never changed once stored: captures share it.
type Submission struct {
	BodyHash string `json:"body_hash"`
	// Task is the task as the finish left it: the table's own record,
	// frozen, while the task has not changed since (the common case,
	// a finish that ended it), which costs no copy.
	Task *Task `json:"task"`
}

// Active reports whether the task is held by a worker.
func (t *Task) Active() bool { return t.State == TaskAssigned || t.State == TaskRunning }

// Running reports whether the task's attempt has started on its worker.
func (t *Task) Running() bool { return t.State == TaskRunning }

// Terminal reports whether the task has ended for good.
func (t *Task) Terminal() bool {
	return t.State == TaskSucceeded || t.State == TaskFailed || t.State == TaskCancelled
}

// Current is the task's latest attempt, to read; nil before its first.
func (t *Task) Current() *Attempt {
	if len(t.Attempts) == 0 {
		return nil
	}
	return &t.Attempts[len(t.Attempts)-1]
}

// OwnCurrent returns the task's current attempt to change, in an array
// of attempts of its own: the old array may be shared with a capture.
func (t *Task) OwnCurrent() *Attempt {
	t.Attempts = slices.Clone(t.Attempts)
	return t.Current()
}

// AttemptsUsed counts the attempts that count against a task's max
// attempts: every one but those preempted and the first
// MaxGPUFaultRetries lost to a GPU fault.
func (t *Task) AttemptsUsed() int {
	n, faults := 0, 0
	for _, a := range t.Attempts {
		switch {
		case a.State == AttemptPreempted:
		case a.State == AttemptLost && a.GPUFault != "" && faults < MaxGPUFaultRetries:
			faults++
		default:
			n++
		}
	}
	return n
}

// Gen is the capture generation the task was last written in.
func (t *Task) Gen() uint64 { return t.gen }

// Frozen reports whether a remembered finish holds this very record: it
// must never change again.
func (t *Task) Frozen() bool { return t.frozen }

// Stamp marks the task as written in generation gen, and not frozen: a
// record of the table's own, which the table may change in place until
// the next capture.
func (t *Task) Stamp(gen uint64) { t.gen, t.frozen = gen, false }

// Freeze marks the record as one a remembered finish holds.
func (t *Task) Freeze() { t.frozen = true }

// Clone copies t and everything it points to, with no write stamp.
func (t *Task) Clone() Task {
	c := *t
	c.gen, c.frozen = 0, false
	c.Devices = slices.Clone(t.Devices)
	c.ExitCode = cloneInt(t.ExitCode)
	c.Output = bytes.Clone(t.Output)
	c.Artifacts = slices.Clone(t.Artifacts)
	if t.Checkpoint != nil {
		cp := *t.Checkpoint
		c.Checkpoint = &cp
	}
	c.Attempts = slices.Clone(t.Attempts)
	for i := range c.Attempts {
		a := &c.Attempts[i]
		a.Devices = slices.Clone(a.Devices)
		a.ExitCode = cloneInt(a.ExitCode)
		if a.Rendezvous != nil {
			e := *a.Rendezvous
			a.Rendezvous = &e
		}
	}
	return c
}

// SameState reports whether t and o hold the same task state (their
// write stamps aside).
func (t *Task) SameState(o *Task) bool {
	if t.ID != o.ID || t.State != o.State || len(t.Attempts) != len(o.Attempts) || !t.UpdatedAt.Equal(o.UpdatedAt) {
		return false
	}
	x, y := *t, *o
	x.gen, x.frozen, y.gen, y.frozen = 0, false, 0, false
	return reflect.DeepEqual(x, y)
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
