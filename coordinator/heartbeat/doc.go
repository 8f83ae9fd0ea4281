// Package heartbeat is what a worker's heartbeat does to the cluster, on
// the leader: it writes a changed inventory and a worker's return from
// offline through Raft, renews the leases of the tasks the worker reports
// running (in the lease manager's memory), and says what the worker must
// cancel and whether it must drain or stop.
//
// It knows no HTTP: httpapi decodes and bounds the request, calls Beat,
// and encodes its Answer. Every write goes through a typed proposal whose
// refusal is handled, never dropped: a worker drained, stopped or
// revoked between the read and the write is answered as it is after the
// write, not as it was before.
package heartbeat
