package devices

import "github.com/gpulayer/gpulayer/agent/devices/nvml"

// These are the nvml package's sentinels, re-exported so callers of this
// package can match them without importing the NVML implementation.
var (
	// ErrUnknownFake: Open was given a fake name that is not in FakeNames.
	ErrUnknownFake = nvml.ErrUnknownFake

	// ErrClosed: Source.Devices was called after Source.Close.
	ErrClosed = nvml.ErrClosed

	// ErrQuery: NVML answered but a system-wide query (the device count)
	// failed, so Source.Devices could produce no inventory.
	ErrQuery = nvml.ErrQuery
)
