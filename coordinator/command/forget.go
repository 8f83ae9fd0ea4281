package command

import "time"

// ForgetWorker forgets a worker an admin no longer wants listed: one that
// is revoked, offline or never approved, and holds no task. Its record,
// credential and group memberships go, as at the end of a deregistration;
// the audit log keeps the event (worker.forgotten), naming who asked. A
// worker that is ready, draining or stopping, or that still holds a task,
// is refused: it is not dead, or its tasks are not settled.
type ForgetWorker struct {
	WorkerID string    `json:"worker_id"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (ForgetWorker) Type() Type { return TypeForgetWorker }
