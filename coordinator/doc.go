// Package coordinator assembles a GpuLayer coordinator: the Raft node and
// its state machine, the leader's lease timers and scheduler, and the HTTP
// API, and runs them until its context ends.
package coordinator
