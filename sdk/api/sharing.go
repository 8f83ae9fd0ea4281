package api

// Fractional GPU sharing (docs/gpus.md, "Fractional sharing"): a task with
// Resources.GPUSharing set takes GPUMemoryMiB of one whole GPU's memory,
// beside other such tasks, instead of the whole GPU.

// GPU sharing modes, Resources.GPUSharing. Empty: the task's GPUs are its
// own (exclusive).
const (
	// SharingEnforced co-locates the task only on a GPU whose agent can
	// enforce its memory share (Device.Sharing names the mechanism).
	SharingEnforced = "enforced"
	// SharingUnenforced accepts a GPU that cannot enforce the share: only
	// the agent's watchdog stops a task over it.
	SharingUnenforced = "unenforced"
)

// Device sharing mechanisms, Device.Sharing. Empty: the agent cannot
// enforce a memory share on the GPU.
const (
	// DeviceSharingMPS: an MPS control daemon serves the GPU; a task's
	// share is set as its MPS pinned device memory limit.
	DeviceSharingMPS = "mps"
)

// MaxGPUShareMiB bounds resources.gpu_memory_mib for a shared task: 1 TiB,
// above the memory of any GPU made so far.
const MaxGPUShareMiB = 1 << 20

// ValidGPUSharing reports whether mode is a sharing mode
// (Resources.GPUSharing), the empty one included.
func ValidGPUSharing(mode string) bool {
	switch mode {
	case "", SharingEnforced, SharingUnenforced:
		return true
	}
	return false
}

// ValidDeviceSharing reports whether m is a sharing mechanism a device
// report may name (Device.Sharing), the empty one included.
func ValidDeviceSharing(m string) bool {
	return m == "" || m == DeviceSharingMPS
}

// Shared reports whether r asks for a share of a GPU rather than whole
// GPUs.
func (r *Resources) Shared() bool { return r != nil && r.GPUSharing != "" }
