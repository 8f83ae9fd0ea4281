//go:build cgo && linux

package nvml

import (
	"context"
	"fmt"
	"strings"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/internal/gpusku"
)

const noCUDA = "no CUDA: this agent runs no GPU kernels"

// preflight runs the checks NVML can answer on each GPU (see
// preflightsrc.go).
// compute, where not nil, runs the checks that need CUDA; each GPU's peers
// for the bandwidth check are the task's other whole GPUs.
func preflight(ctx context.Context, lib gonvml.Interface, compute Compute, uuids []string) []PreflightCheck {
	var out []PreflightCheck
	for i, u := range uuids {
		if ctx.Err() != nil {
			return append(out, skipAll(uuids[i:], "the preflight's time bound passed first")...)
		}
		out = append(out, preflightGPU(ctx, lib, compute, u, peersOf(u, uuids))...)
	}
	return out
}

// peersOf is the whole GPUs of uuids other than u.
func peersOf(u string, uuids []string) []string {
	var out []string
	for _, p := range uuids {
		if p != u && !strings.HasPrefix(p, "MIG-") {
			out = append(out, p)
		}
	}
	return out
}

func preflightGPU(ctx context.Context, lib gonvml.Interface, compute Compute, uuid string, peers []string) []PreflightCheck {
	check := func(name, status, detail string) PreflightCheck {
		return PreflightCheck{GPU: uuid, Name: name, Status: status, Detail: detail}
	}
	if strings.HasPrefix(uuid, "MIG-") {
		return skipAll([]string{uuid}, "a MIG device: its GPU's health stands for it, and it has no NVLink of its own")
	}
	dev, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != gonvml.SUCCESS {
		return []PreflightCheck{check("memory", PreflightFail, "NVML cannot find the GPU: "+describe(ret))}
	}
	out := []PreflightCheck{memoryCheck(dev, check), eccCheck(dev, check)}
	links := nvlinkCheck(dev, check)
	out = append(out, links)
	if compute == nil {
		out = append(out, check("memory-pattern", PreflightSkipped, noCUDA), check("matmul", PreflightSkipped, noCUDA))
	} else {
		model, _ := dev.GetName()
		o := compute.MemoryPattern(ctx, uuid)
		out = append(out, check("memory-pattern", o.Status, o.Detail))
		o = compute.Matmul(ctx, uuid, model)
		out = append(out, check("matmul", o.Status, o.Detail))
	}
	switch {
	case links.Status == PreflightSkipped:
		return append(out, check("p2p-bandwidth", PreflightSkipped, "no NVLink in the topology"))
	case links.Status == PreflightFail:
		return append(out, check("p2p-bandwidth", PreflightSkipped, "an NVLink is down (the nvlink check)"))
	case compute == nil:
		return append(out, check("p2p-bandwidth", PreflightSkipped, noCUDA))
	}
	o := compute.PeerBandwidth(ctx, uuid, peers)
	return append(out, check("p2p-bandwidth", o.Status, o.Detail))
}

type checkFunc func(name, status, detail string) PreflightCheck

// memoryCheck: the memory NVML reports, against the model's.
func memoryCheck(dev gonvml.Device, check checkFunc) PreflightCheck {
	mem, ret := dev.GetMemoryInfo()
	if ret != gonvml.SUCCESS || mem.Total == 0 {
		return check("memory", PreflightFail, "the memory cannot be read: "+describe(ret))
	}
	name, _ := dev.GetName()
	mib := mem.Total >> 20
	if why := gpusku.Check(name, mib, ""); why != "" {
		return check("memory", PreflightFail, why)
	}
	return check("memory", PreflightPass, fmt.Sprintf("%d MiB", mib))
}

// eccCheck: uncorrected ECC errors since the driver loaded.
func eccCheck(dev gonvml.Device, check checkFunc) PreflightCheck {
	n, ret := dev.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.VOLATILE_ECC)
	switch {
	case ret == gonvml.ERROR_NOT_SUPPORTED:
		return check("ecc", PreflightSkipped, "the GPU reports no ECC counters")
	case ret != gonvml.SUCCESS:
		return check("ecc", PreflightFail, "the ECC counters cannot be read: "+describe(ret))
	case n > 0:
		return check("ecc", PreflightFail, fmt.Sprintf("%d uncorrected ECC errors since the driver loaded", n))
	}
	return check("ecc", PreflightPass, "0 uncorrected ECC errors")
}

// nvlinkCheck: every NVLink the GPU has is up.
func nvlinkCheck(dev gonvml.Device, check checkFunc) PreflightCheck {
	total := 0
	var down []string
	for l := range gonvml.NVLINK_MAX_LINKS {
		st, ret := dev.GetNvLinkState(l)
		if ret != gonvml.SUCCESS {
			continue // no link there
		}
		total++
		if st != gonvml.FEATURE_ENABLED {
			down = append(down, fmt.Sprint(l))
		}
	}
	switch {
	case total == 0:
		return check("nvlink", PreflightSkipped, "no NVLink in the topology")
	case len(down) > 0:
		return check("nvlink", PreflightFail, fmt.Sprintf("%d of %d NVLinks down (links %s)", len(down), total, strings.Join(down, ", ")))
	}
	return check("nvlink", PreflightPass, fmt.Sprintf("%d/%d NVLinks active", total, total))
}
