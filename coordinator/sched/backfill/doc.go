// Package backfill holds the parts of backfill that are pure functions
// of records: what a held head task holds and whom it spares (Hold),
// when a busy device is expected free (End, EndOf), the slots a member
// of the head could run in and the order a hold takes them (Slot,
// Compare), and the two structures that find the first slots of a fleet
// without sorting it: a merge over per-worker lists (First) and a heap
// of lists kept up to date one worker at a time (Index).
//
// The state (coordinator/state) chooses the hold from its tables and
// keeps it per state version; the matcher reads it. Every rule here
// reads only the replicated records it is given, so every leader holds
// the same GPUs.
package backfill
