// Package agent is the GpuLayer agent that runs on a GPU node: it
// registers with the coordinators (outbound only), discovers its GPUs,
// heartbeats, long-polls for work, and runs each task through an executor
// plugin in its own process.
package agent
