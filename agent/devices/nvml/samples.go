package nvml

// GPU metrics: a sample of each GPU's utilization, frame buffer,
// temperature and power, read in the background by the agent so that a
// metrics scrape never waits on NVML. A reading the GPU does not support
// is absent; a call that fails otherwise is counted (CallError). The
// reading itself is in sample.go (cgo).

// Sample is one GPU's readings; a nil field was not read.
type Sample struct {
	Index      int
	UUID, Name string
	GPUUtil    *uint32  // percent
	MemUtil    *uint32  // percent of time memory was read or written
	FBUsedMiB  *uint64  // frame buffer
	FBFreeMiB  *uint64  // frame buffer
	TempC      *uint32  // GPU temperature
	PowerWatts *float64 // draw
	// Processes are the compute processes on the GPU (MPS clients
	// included) with the memory each uses, when ProcessesRead: NVML
	// answered. The agent's share watchdog reads them.
	Processes     []Process
	ProcessesRead bool
}

// Process is a process using a GPU: its host pid and the GPU memory it
// uses (MiB), when NVML knows it (UsedKnown).
type Process struct {
	PID       uint32
	UsedMiB   uint64
	UsedKnown bool
}

// CallError is an NVML call that failed while sampling: its name and the
// return code's text.
type CallError struct {
	Call, Code string
}
