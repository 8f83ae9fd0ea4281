package command

import "time"

// Worker control actions (ControlWorker.Action).
const (
	ActionDrain      = "drain"
	ActionStop       = "stop"
	ActionResume     = "resume"
	ActionDeregister = "deregister"
)

// ControlWorker drains, stops, resumes or deregisters a worker.
//
// A drain makes the worker take no new task; its running tasks go on
// until Deadline, when those left are stopped and requeued without using
// up an attempt (ExpireDrains). A stop does that at once, and the worker's
// agent exits once it holds none. A resume makes a draining or stopping
// worker ready again. A deregister is a drain after which the worker,
// once it holds no task, is forgotten: its credential and record go, the
// audit log keeps the event. Self says the worker's own agent asked (it
// may resume only a drain it asked for itself); By names who asked.
type ControlWorker struct {
	WorkerID string    `json:"worker_id"`
	Action   string    `json:"action"`
	Deadline time.Time `json:"deadline,omitzero"`
	Self     bool      `json:"self,omitempty"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

// ExpireDrains stops the tasks left on every draining worker whose
// deadline is at or before Now: each is asked to stop and, when its
// attempt ends, requeued without using up an attempt. The leader proposes
// it when a deadline passes; it is decided on the log's data alone.
type ExpireDrains struct {
	Now time.Time `json:"now"`
}

// ClearGPU asks a worker's agent to take a GPU out of fault or quarantine
// (through its hold-down window): the request stays on the worker until
// its device report shows the GPU healthy or recovering, or gone.
type ClearGPU struct {
	WorkerID string    `json:"worker_id"`
	UUID     string    `json:"uuid"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (ControlWorker) Type() Type { return TypeControlWorker }
func (ExpireDrains) Type() Type  { return TypeExpireDrains }
func (ClearGPU) Type() Type      { return TypeClearGPU }

// ApproveDevices makes a worker's current GPU inventory its approved one:
// GPUs new since the last approval, or whose memory changed, are offered
// from then on (state/gpuops/approve.go).
type ApproveDevices struct {
	WorkerID string    `json:"worker_id"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (ApproveDevices) Type() Type { return TypeApproveDevices }

// CordonDevice cordons one of a worker's GPUs (Cordon), or lifts its
// cordon: a cordoned GPU, and every MIG device of it, is given no new
// task, while what runs on it goes on (state/gpuops/cordon.go). With Drain (and
// Cordon) the tasks on it are also asked to stop and requeued without
// using an attempt (state/gpudrain.go).
type CordonDevice struct {
	WorkerID string    `json:"worker_id"`
	UUID     string    `json:"uuid"`
	Cordon   bool      `json:"cordon"`
	Drain    bool      `json:"drain,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (CordonDevice) Type() Type { return TypeCordonDevice }
