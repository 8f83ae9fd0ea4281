// Package state is the coordinator's replicated state: credentials (hashes
// only), workers, groups, jobs, tasks with their attempts and the
// submission index, kept in memory with the indexes that make reads and
// matching cheap. Task output is decided here (its bounds, in the task
// records) but kept in an output.Store (package output), written once
// per Apply: in memory for tests, a bbolt file on a coordinator (package
// outputstore).
//
// The tables with rules of their own are rooms beside the store
// (credentials, groups, teams, enrollment, artifacts, audit, usage, the
// records, the pending queue, a job's history), and so are the rules
// over one worker record or over the jobs' admission: state/gpuops,
// state/fleetctl and state/deps, which report what else they cause
// through an interface the store implements (roomeffects.go,
// dependencies.go). Placement's decisions are pure functions in
// coordinator/sched over a view the store gives (planview.go).
//
// Store.Apply is a pure function of the commands it is given: it never
// reads the clock, a random source or map order, so every replica that
// applies the same log holds the same state. Business refusals
// (wrong_claimant, not_claimed, stale_attempt, conflict) are decided here,
// atomically with the write, and returned as the command's result.
//
// Each command has one typed outcome (handlers.go lists them): a domain
// record, copied so the caller may read it outside the store's lock.
// A proposer reads it with Propose[O], the one place where the untyped
// value raft hands back is checked against the type asked for. The
// package holds records and never renders the API's views or bytes:
// package view does, for httpapi and sched (deps_test.go keeps sdk/api
// and net/http out of this package).
//
// A snapshot is a Capture, taken in a few milliseconds while no command
// applies, then encoded (Capture.Encode, package snapcodec) while commands go on.
// For a capture to stay what it was, the store never edits a record a
// capture may share: a command makes a task its own (ownTask) or replaces
// a job (ownJob) before changing it, and replaces a slice, map or pointer
// field rather than edit what it points to (capture.go lists the rules;
// this package's tests panic on a task changed without ownTask).
//
// The package does not import raft; package fsm adapts it.
package state
