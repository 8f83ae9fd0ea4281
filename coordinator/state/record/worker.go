package record

import (
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Worker is a registered worker.
type Worker struct {
	ID           string            `json:"id"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels,omitempty"`
	Capabilities []string          `json:"capabilities"`
	Executors    []string          `json:"executors"`
	Devices      []command.Device  `json:"devices"`
	CredentialID string            `json:"credential_id"`
	RegisteredAt time.Time         `json:"registered_at"`
	RegisteredBy string            `json:"registered_by,omitempty"`

	Origin            string    `json:"origin,omitempty"`
	InstanceID        string    `json:"instance_id,omitempty"`
	ClusterKey        string    `json:"cluster_key,omitempty"`
	ExternalWorkerKey string    `json:"external_worker_key,omitempty"`
	TokenID           string    `json:"token_id,omitempty"`
	ApprovedBy        string    `json:"approved_by,omitempty"`
	ApprovedAt        time.Time `json:"approved_at,omitzero"`
	// LastAcquire is the assignment the worker's last acquire with a
	// request id was answered with.
	LastAcquire *LastAcquire `json:"last_acquire,omitempty"`
	// A draining or stopping worker: who asked ("self" when its own agent
	// did), when its remaining tasks are stopped (zero once they have
	// been told to, or for a stop), and whether it is forgotten once it
	// holds no task.
	DrainedBy     string    `json:"drained_by,omitempty"`
	DrainDeadline time.Time `json:"drain_deadline,omitzero"`
	Deregister    bool      `json:"deregister,omitempty"`
	// ClearGPUs are GPUs an admin asked the agent to clear.
	ClearGPUs []string `json:"clear_gpus,omitempty"`
	// ApprovedDevices is the inventory the worker's GPUs are offered as:
	// UUID to memory in MiB; nil in state written before it was kept.
	// Empty is not nil: a worker approved with no GPUs has every GPU it
	// reports later awaiting approval, so a snapshot writes the field
	// always (nil as nil), never omitting it.
	ApprovedDevices map[string]uint64 `json:"approved_devices"`
	// Cordons maps each GPU an admin cordoned (its UUID; a MIG device's
	// GPU cordons it too) to the reason given: such a GPU is not offered.
	// Kept apart from Devices, which each report of the agent replaces.
	Cordons map[string]string `json:"cordons,omitempty"`
	// MIGLayouts are the MIG layouts asked of its GPUs, one per GPU,
	// sorted by UUID.
	MIGLayouts []MIGLayout `json:"mig_layouts,omitempty"`
	// ApprovedIdentity binds, by UUID, the rest of what placement trusts
	// of each approved GPU; nil in state written before it was kept.
	// Written always, as ApprovedDevices.
	ApprovedIdentity map[string]string `json:"approved_identity"`
	// MaxTasks is how many tasks the worker's agent runs at once, as its
	// heartbeats say (0: not said); a gang placement keeps within it.
	MaxTasks int `json:"max_tasks,omitempty"`
	// Holds are devices a preemption freed for the task it was made for:
	// no other task is given them while the hold lasts. Replaced, never
	// edited.
	Holds []DeviceHold `json:"holds,omitempty"`

	// held holds the ids of tasks assigned to or running on the worker
	// (Hold, Release, Held).
	held map[string]struct{}
	// topo is its topology labels, numbered (Topology).
	topo Topology
}

// LastAcquire is what a worker's last acquire with a request id was
// answered with: the request's id and the attempts it was answered with
// (the first in TaskID and AttemptID, any more of a call for several
// tasks in More). An agent retries a call whose answer it lost with the
// same id, so one record per worker is enough to answer the retry as the
// first call was answered, on this leader or the next.
type LastAcquire struct {
	RequestID string        `json:"request_id"`
	TaskID    string        `json:"task_id"`
	AttemptID string        `json:"attempt_id"`
	More      []TaskAttempt `json:"more,omitempty"`
}

// TaskAttempt names one attempt of a task.
type TaskAttempt struct {
	TaskID    string `json:"task_id"`
	AttemptID string `json:"attempt_id"`
}

// With returns a copy of rec with more assignments: rec itself may be
// shared with a capture.
func (rec *LastAcquire) With(more ...TaskAttempt) *LastAcquire {
	c := *rec
	c.More = append(slices.Clip(rec.More), more...)
	return &c
}

// The statuses of a worker: waiting for approval, taking work, not
// heard from within its lease, revoked, draining (taking nothing new,
// its tasks stopped at the drain's deadline) and stopping (taking
// nothing new, its tasks told to stop at once).
const (
	WorkerPending  = "pending"
	WorkerReady    = "ready"
	WorkerOffline  = "offline"
	WorkerRevoked  = "revoked"
	WorkerDraining = "draining"
	WorkerStopping = "stopping"
)

// The states of a MIG layout request: asked and not yet acted on,
// applied by the agent, or failed.
const (
	MIGPending = "pending"
	MIGApplied = "applied"
	MIGFailed  = "failed"
)

// MIGLayout is the MIG layout asked of one GPU.
type MIGLayout struct {
	UUID string `json:"uuid"`
	// Layout is the profiles asked for, sorted; empty: the GPU whole.
	Layout []string `json:"layout,omitempty"`
	// Generation tells one request from the next: the agent reports the
	// one it acted on.
	Generation uint64 `json:"generation"`
	State      string `json:"state"`
	Reason     string `json:"reason,omitempty"`
	By         string `json:"by"`
	Auto       bool   `json:"auto,omitempty"`
	// At is when it was asked, SettledAt when it was applied or failed.
	At        time.Time `json:"at"`
	SettledAt time.Time `json:"settled_at"`
}

// DeviceHold holds one device of a worker for a pending task.
type DeviceHold struct {
	Device string    `json:"device"`
	TaskID string    `json:"task_id"`
	Until  time.Time `json:"until"`
}

// Topology is a worker's place: each field is its label value's number
// in the state's table of topology names, 0 where the worker has no such
// label.
type Topology struct {
	Domain, Switch, Rack int32
}

// Topology is the worker's place as SetTopology numbered it.
func (w *Worker) Topology() Topology { return w.topo }

// SetTopology keeps the worker's numbered place.
func (w *Worker) SetTopology(t Topology) { w.topo = t }

// Hold notes that the worker holds task id (assigned or running).
func (w *Worker) Hold(id string) {
	if w.held == nil {
		w.held = map[string]struct{}{}
	}
	w.held[id] = struct{}{}
}

// Release notes that the worker no longer holds task id.
func (w *Worker) Release(id string) { delete(w.held, id) }

// Held yields the ids of the tasks the worker holds, in no order.
func (w *Worker) Held() iter.Seq[string] { return maps.Keys(w.held) }

// HeldCount is how many tasks the worker holds.
func (w *Worker) HeldCount() int { return len(w.held) }

// DropHeld forgets the held tasks: for a copy that must not share the
// table's set, or a record about to be counted afresh.
func (w *Worker) DropHeld() { w.held = nil }

// Clone copies w and everything it points to but its held set, which is
// derived and not part of a snapshot.
func (w *Worker) Clone() Worker {
	c := *w
	c.held = nil
	c.Labels = maps.Clone(w.Labels)
	c.Capabilities = slices.Clone(w.Capabilities)
	c.Executors = slices.Clone(w.Executors)
	c.Devices = slices.Clone(w.Devices)
	c.ClearGPUs = slices.Clone(w.ClearGPUs)
	if w.LastAcquire != nil {
		last := *w.LastAcquire
		last.More = slices.Clone(last.More)
		c.LastAcquire = &last
	}
	c.ApprovedDevices = maps.Clone(w.ApprovedDevices)
	c.ApprovedIdentity = maps.Clone(w.ApprovedIdentity)
	c.Cordons = maps.Clone(w.Cordons)
	c.Holds = slices.Clone(w.Holds)
	c.MIGLayouts = cloneMIGLayouts(w.MIGLayouts)
	return c
}

// cloneMIGLayouts copies layouts and the profiles each lists.
func cloneMIGLayouts(in []MIGLayout) []MIGLayout {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].Layout = slices.Clone(in[i].Layout)
	}
	return out
}

// PendingMIGLayouts are the MIG layout requests w's agent is to act on.
func (w *Worker) PendingMIGLayouts() []MIGLayout {
	var out []MIGLayout
	for _, m := range w.MIGLayouts {
		if m.State == MIGPending {
			out = append(out, m)
		}
	}
	return out
}
