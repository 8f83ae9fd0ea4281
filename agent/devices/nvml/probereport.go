package nvml

// ProbeReport is what Probe found: the facts about a driver that the
// health watcher and the metrics sampler depend on, recorded once on a real
// GPU (docs/gpus.md, "On a real GPU").
type ProbeReport struct {
	DriverVersion string `json:"driver_version"`
	// EventSet is NVML's answer to creating an event set ("SUCCESS" or
	// its error text).
	EventSet     string      `json:"event_set"`
	GPUs         []ProbeGPU  `json:"gpus"`
	Samples      []Sample    `json:"samples"`
	SampleErrors []CallError `json:"sample_errors,omitempty"`
	Errors       []CallError `json:"errors,omitempty"`
}

// ProbeGPU is one GPU's part of a ProbeReport.
type ProbeGPU struct {
	Index int    `json:"index"`
	UUID  string `json:"uuid"`
	// Error is set when the GPU could not be reached at all (the rest of
	// its fields are then empty).
	Error string `json:"error,omitempty"`
	// SupportedEvents names the event types the GPU reports
	// (GetSupportedEventTypes); SupportedEventsError is set instead when
	// the call failed.
	SupportedEvents      []string `json:"supported_events"`
	SupportedEventsError string   `json:"supported_events_error,omitempty"`
	// Register is NVML's answer to registering the events the watcher
	// watches (XID critical errors and double-bit ECC).
	Register string `json:"register"`
	// RecoveryAction is the driver's recovery-action field, or
	// "unsupported" where the driver lacks it.
	RecoveryAction string `json:"recovery_action"`
	// Processes are the compute processes and MPS clients NVML lists on
	// the GPU (empty, not nil, when it lists none); ProcessesError names
	// the call that failed instead.
	Processes      []ProbeProcess `json:"processes"`
	ProcessesError string         `json:"processes_error,omitempty"`
}

// ProbeProcess is one process NVML lists on a GPU: its PID as NVML sees
// it (the host's, or a container's namespace's) and its GPU memory, null
// where NVML says it is not available.
type ProbeProcess struct {
	PID     uint32  `json:"pid"`
	UsedMiB *uint64 `json:"used_mib"`
}
