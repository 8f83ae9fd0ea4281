// Package fit holds placement's rules about one worker's GPUs, as pure
// functions of its record and a task's resources: which devices it
// offers (healthy, approved, not cordoned, not held by a MIG layout
// request), which of them fit a task's terms (memory, model, compute
// capability, MIG profile, a share's room), which capabilities a worker
// takes, the order healthy and degraded devices are chosen in, and the
// best-connected set of GPUs a multi-GPU task gets (topology.go).
//
// The scheduler's match and the state machine's re-check of every
// assignment apply the same rules, so the package sits below both: it
// imports the state's records (package record) and values (package
// command), never the store, the scheduler or anything of HTTP. Nothing
// here reads a clock or a random source; the identity memo
// (identitymemo.go) is a pure function's cache, so every replica
// decides alike.
package fit
