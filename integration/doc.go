// Package integration holds end-to-end tests: real coordinators (Raft over
// loopback TCP, real HTTP), real agents with go-nvml's mock GPUs, and the
// exec plugin as a real process.
package integration
