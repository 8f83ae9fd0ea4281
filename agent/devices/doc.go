// Package devices is the agent's view of its GPUs: an inventory with a
// health flag per device, behind the small Source interface.
//
// Open picks the implementation: the system's NVML library, one of go-nvml's
// mock DGX servers (the --fake-gpus sets), or no GPUs at all. The NVML code
// lives in the nvml subpackage, the only importer of go-nvml; it needs cgo,
// and a build without cgo reports zero real GPUs (fake sets still work).
//
// A GPU whose health is unknown is not offered: a device is Healthy only
// when its handle, UUID, name and memory queries all succeeded. Unhealthy
// devices are still reported, flagged, so operators can see them.
package devices
