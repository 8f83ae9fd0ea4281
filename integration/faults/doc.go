// Package faults runs a randomized, seeded fault campaign against a
// three-coordinator cluster on loopback and checks what its clients and
// workers saw for linearizability, with porcupine, against a model of the
// job and task lifecycle, and against invariants checked once the faults
// have healed. Everything is in its tests; see campaign_test.go for how
// to run and replay a campaign.
package faults
