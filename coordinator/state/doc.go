// Package state is the coordinator's replicated state: credentials (hashes
// only), workers, groups, jobs, tasks with their attempts, logs and the
// submission index, kept in memory with the indexes that make reads and
// matching cheap.
//
// Store.Apply is a pure function of the commands it is given: it never
// reads the clock, a random source or map order, so every replica that
// applies the same log holds the same state. Business refusals
// (wrong_claimant, not_claimed, stale_attempt, conflict) are decided here,
// atomically with the write, and returned as the command's result.
//
// The package does not import raft; package fsm adapts it.
package state
