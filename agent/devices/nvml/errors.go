package nvml

import "errors"

var (
	// ErrUnavailable means NVML could not be initialised: no driver, no
	// library, no permission, or no NVML in this build. The wrapped message
	// says which. Callers usually fall back to reporting zero GPUs.
	ErrUnavailable = errors.New("nvml unavailable")

	// ErrNoCgo means this binary was built without cgo (or for a platform
	// other than Linux), so NVML is not compiled in. It always comes wrapped
	// together with ErrUnavailable.
	ErrNoCgo = errors.New("NVML is not compiled into this build (built without cgo)")

	// ErrUnknownFake means OpenFake was given a name that is not one of
	// FakeNames.
	ErrUnknownFake = errors.New("unknown fake GPU set")

	// ErrClosed is returned by Source.Devices after Source.Close.
	ErrClosed = errors.New("device source closed")

	// ErrQuery means a system-wide NVML query (such as the device count)
	// failed, so no inventory could be produced at all. Failures of a single
	// device do not return an error; that device is flagged unhealthy.
	ErrQuery = errors.New("nvml query failed")
)

// ErrDeviceUnhealthy wraps the reason one device was flagged Healthy=false.
// Such errors are logged by Source, never returned by Source.Devices.
var ErrDeviceUnhealthy = errors.New("gpu unhealthy")

var (
	// ErrNoRepartition means the source cannot repartition its GPUs: no
	// NVML behind it (a static inventory, a build without cgo) or a bare
	// fake set (OpenFake), whose mock has no MIG devices to show.
	ErrNoRepartition = errors.New("this agent's GPUs cannot be repartitioned")

	// ErrMIGLayout means a MIG layout the GPU cannot take: a profile it
	// does not have, or no room left for one; the GPU is left as it was.
	ErrMIGLayout = errors.New("MIG layout not possible on this GPU")

	// ErrRepartition means NVML refused a step of a repartition that had
	// begun: the GPU may be left part-way, as its next read shows.
	ErrRepartition = errors.New("MIG repartition failed")
)
