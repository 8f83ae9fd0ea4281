package executor

// The agent names, in Task.Env, the CDI devices of a task and where its
// CDI spec lies (docs/containers.md). Like EnvSandbox they are
// instructions to an executor that runs containers, which removes them
// from the container's environment; a task of another executor sees them
// and may ignore them.
const (
	// EnvCDIDevices lists the task's devices as fully qualified CDI
	// names (gpulayer.io/gpu=<uuid>), comma separated.
	EnvCDIDevices = "GPULAYER_CDI_DEVICES"
	// EnvCDIDir is the directory holding the agent's CDI spec.
	EnvCDIDir = "GPULAYER_CDI_DIR"
)
