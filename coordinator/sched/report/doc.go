// Package report is what the scheduler tells of the fleet, in
// placement's own words, as pure functions of a view of the replicated
// state (package place's views): the queue as the matcher takes it, with
// each task's pending reason (Queue, GET /v1/queue), the MIG profiles the
// queue waits for and where they could run (PendingMIGDemand, for the
// MIG auto mode), who holds each GPU (Holders, GET /v1/gpus) and the
// fleet's GPU counts (CountGPUs). The store calls them under its read
// lock; nothing here changes what it reads.
package report
