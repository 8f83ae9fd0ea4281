// Package gpuops is the state machine's room for what is done to a
// worker's GPUs, one by one: an admin's cordon (Cordon), a request to
// clear a GPU in fault (Clear) and its settling by the agent's next
// device report (SettleClears), the approval of a changed inventory
// (Approve), a GPU marked failed under a task (MarkFailed), MIG layout
// requests (SetMIGLayout) and their settling (SettleMIGLayouts), and the
// audit of what a device report changed (AuditDevices).
//
// Each operation takes the worker record it changes, found and checked
// (not revoked) by the store, and an Effects for what it causes beyond
// the record: audit events, and new room for placement. It changes the
// record's slices and maps by replacing them, never in place, since a
// capture of the state may hold the old ones. Like every room it reads
// no clock (the command's Now is the time) and knows no other room.
package gpuops

import "github.com/gpulayer/gpulayer/coordinator/command"

// Effects is what an operation causes beyond the worker record.
type Effects interface {
	// Audit records an audit event.
	Audit(e command.AuditEvent)
	// MarkPending says that work may be placed that could not be before
	// (a GPU is offered again).
	MarkPending()
}
