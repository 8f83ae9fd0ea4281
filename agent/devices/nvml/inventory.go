//go:build cgo && linux

package nvml

import (
	"context"
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/internal/gpusku"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// inventory reads every device through lib, which must already be
// initialised. It is the one code path for both the real library and
// go-nvml's mock servers.
//
// It makes only these calls, which the mock servers implement (calling an
// unset function of a moq mock panics): DeviceGetCount,
// SystemGetDriverVersion, SystemGetCudaDriverVersion, DeviceGetHandleByIndex
// and, per device, GetUUID, GetName, GetMemoryInfo, GetCudaComputeCapability,
// GetPciInfo and GetMigMode (and, for a GPU in MIG mode, mig.go's calls,
// which only the test fixture answers).
//
// A failed device count is an error wrapping ErrQuery: the inventory as a
// whole is unknown. A failure on one device is not: the device is reported
// with Healthy=false and the reason is returned in problems, each wrapping
// ErrDeviceUnhealthy. Driver and CUDA versions and the compute capability are
// optional and left empty when NVML cannot say.
func inventory(ctx context.Context, lib gonvml.Interface) (devs []api.Device, problems []error, err error) {
	n, ret := lib.DeviceGetCount()
	if ret != gonvml.SUCCESS {
		return nil, nil, fmt.Errorf("%w: device count: %s", ErrQuery, describe(ret))
	}
	var driver, cuda string
	if v, ret := lib.SystemGetDriverVersion(); ret == gonvml.SUCCESS {
		driver = v
	}
	if v, ret := lib.SystemGetCudaDriverVersion(); ret == gonvml.SUCCESS {
		cuda = formatCUDAVersion(v)
	}
	devs = make([]api.Device, 0, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		d, err := readDevice(lib, i)
		if err != nil {
			problems = append(problems, fmt.Errorf("%w: gpu %d: %w", ErrDeviceUnhealthy, i, err))
		}
		d.DriverVersion, d.CUDAVersion = driver, cuda
		devs = append(devs, d)
		if err == nil {
			migs, migProblems := readMIG(lib, &devs[len(devs)-1])
			devs = append(devs, migs...)
			problems = append(problems, migProblems...)
		}
	}
	sortByIndex(devs)
	return devs, problems, nil
}

// readDevice reads device i. The device is healthy only when its handle,
// UUID, name and memory queries all succeed; otherwise it comes back with
// Healthy=false, whatever fields were read, and the first failure.
func readDevice(lib gonvml.Interface, i int) (api.Device, error) {
	d := api.Device{Index: i}
	h, ret := lib.DeviceGetHandleByIndex(i)
	if ret != gonvml.SUCCESS || h == nil {
		return d, queryError("handle", ret)
	}
	// Optional: the UUID and memory matter more for scheduling than this.
	if major, minor, ret := h.GetCudaComputeCapability(); ret == gonvml.SUCCESS {
		d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	}
	if pci, ret := h.GetPciInfo(); ret == gonvml.SUCCESS {
		d.PCIDevice = gpusku.FormatPCIDevice(pci.PciDeviceId)
	}
	uuid, ret := h.GetUUID()
	if ret != gonvml.SUCCESS || uuid == "" {
		return d, queryError("uuid", ret)
	}
	d.UUID = uuid
	name, ret := h.GetName()
	if ret != gonvml.SUCCESS || name == "" {
		return d, queryError("name", ret)
	}
	d.Name = name
	mem, ret := h.GetMemoryInfo()
	if ret != gonvml.SUCCESS || mem.Total == 0 {
		return d, queryError("memory", ret)
	}
	d.MemoryMiB = mem.Total / (1 << 20)
	d.Healthy = true
	return d, nil
}

// queryError describes a failed or empty per-device query.
func queryError(what string, ret gonvml.Return) error {
	if ret == gonvml.SUCCESS {
		return fmt.Errorf("%s: empty answer", what)
	}
	return fmt.Errorf("%s: %s", what, describe(ret))
}

// formatCUDAVersion turns NVML's CUDA driver version (12040) into "12.4".
// Zero or negative values mean unknown and give "".
func formatCUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, (v%1000)/10)
}
