// Package gpusku knows what NVIDIA's data-center GPUs are: for each model
// name NVML reports, its memory and compute capability. The coordinator
// checks a worker's device report against it, so that a worker cannot
// claim, say, an H100 with the memory of another card, and be given work
// for it. A name it does not know is not checked.
package gpusku

import (
	"fmt"
	"strings"
)

// SKU is one GPU model as NVML names it.
type SKU struct {
	Name              string
	MemoryMiB         uint64
	ComputeCapability string
	// PCIDevice is the model's PCI id as "vendor:device" in lowercase hex
	// ("10de:2330"), as lspci prints it; empty where the table does not
	// pin it.
	PCIDevice string
}

// known are the models checked, with the memory NVML reports for them
// (MiB; boards differ by a few hundred MiB, hence the tolerance).
var known = []SKU{
	{"NVIDIA A100-PCIE-40GB", 40960, "8.0", "10de:20f1"},
	{"NVIDIA A100-PCIE-80GB", 81920, "8.0", "10de:20b5"},
	{"NVIDIA A100-SXM4-40GB", 40960, "8.0", "10de:20b0"},
	{"NVIDIA A100-SXM4-80GB", 81920, "8.0", "10de:20b2"},
	{"NVIDIA A30-PCIE-24GB", 24576, "8.0", "10de:20b7"},
	{"NVIDIA H100 80GB HBM3", 81920, "9.0", "10de:2330"},
	{"NVIDIA H100 PCIe", 81920, "9.0", ""},
	{"NVIDIA H200 141GB HBM3e", 144384, "9.0", "10de:2333"},
	{"NVIDIA B200 180GB HBM3e", 184320, "10.0", "10de:2b00"},
}

// memoryTolerance is how far (a fraction) a board's reported memory may
// be from its model's: an H100 SXM reports 81,559 MiB of 81,920.
const memoryTolerance = 0.03

// Lookup finds the model of a name NVML reports.
func Lookup(name string) (SKU, bool) {
	for _, s := range known {
		if strings.EqualFold(s.Name, strings.TrimSpace(name)) {
			return s, true
		}
	}
	return SKU{}, false
}

// Known lists the models checked.
func Known() []SKU { return append([]SKU(nil), known...) }

// Check says how a device's report contradicts its model, or "" when it
// does not (or the model is not known). An empty compute capability is
// not checked: NVML may not say.
func Check(name string, memoryMiB uint64, computeCapability string) string {
	s, ok := Lookup(name)
	if !ok {
		return ""
	}
	lo := float64(s.MemoryMiB) * (1 - memoryTolerance)
	hi := float64(s.MemoryMiB) * (1 + memoryTolerance)
	if m := float64(memoryMiB); m < lo || m > hi {
		return fmt.Sprintf("reports %d MiB, but a %s has %d", memoryMiB, s.Name, s.MemoryMiB)
	}
	if computeCapability != "" && computeCapability != s.ComputeCapability {
		return fmt.Sprintf("reports compute capability %s, but a %s has %s", computeCapability, s.Name, s.ComputeCapability)
	}
	return ""
}

// CheckPCI says how a device's PCI id contradicts its model, or "" when
// it does not, or when the model, the table's id or the report's id is
// not known.
func CheckPCI(name, pciDevice string) string {
	s, ok := Lookup(name)
	if !ok || s.PCIDevice == "" || pciDevice == "" {
		return ""
	}
	if !strings.EqualFold(pciDevice, s.PCIDevice) {
		return fmt.Sprintf("reports PCI device %s, but a %s is %s", pciDevice, s.Name, s.PCIDevice)
	}
	return ""
}

// FormatPCIDevice writes NVML's PCI device id (device << 16 | vendor) as
// "vendor:device" ("10de:2330"); 0 is unknown ("").
func FormatPCIDevice(id uint32) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf("%04x:%04x", id&0xffff, id>>16)
}
