// Package runner carries one assigned task through its life on the agent:
// it marks the attempt started, runs it through an executor plugin with the
// GPUs the coordinator assigned, ships its output in order, enforces the
// timeout and cancellation (stop with a grace period, then kill), and
// reports how it ended.
package runner
