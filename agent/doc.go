// Package agent is the GpuLayer agent that runs on a GPU node: it
// registers with the coordinators (outbound only), discovers its GPUs,
// heartbeats, long-polls for work, and runs each task through an executor
// plugin in its own process. It samples its GPUs in the background for
// metrics and for the watchdog of tasks that share a GPU (gpushare.go).
package agent
