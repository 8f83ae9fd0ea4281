//go:build cgo && linux

package nvml

import (
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"

	"github.com/gpulayer/gpulayer/internal/gpusku"
)

// The coordinator's table of GPU models agrees with NVIDIA's own mock
// definitions, and every fake machine's inventory passes its check.
func TestSKUTableMatchesNVIDIAsMocks(t *testing.T) {
	for _, c := range []gpus.Config{gpus.A100_PCIE_40GB, gpus.A100_PCIE_80GB, gpus.A100_SXM4_80GB, gpus.A30_PCIE_24GB, gpus.H100_SXM5_80GB, gpus.H200_SXM5_141GB, gpus.B200_SXM5_180GB} {
		sku, ok := gpusku.Lookup(c.Name)
		if !ok {
			t.Errorf("%s: not in the table", c.Name)
			continue
		}
		if cc := fmt.Sprintf("%d.%d", c.CudaMajor, c.CudaMinor); sku.ComputeCapability != cc || sku.MemoryMiB != c.MemoryMB {
			t.Errorf("%s: the table says %d MiB, %s; the mock %d MiB, %s", c.Name, sku.MemoryMiB, sku.ComputeCapability, c.MemoryMB, cc)
		}
		if pci := gpusku.FormatPCIDevice(c.PciDeviceId); sku.PCIDevice != pci {
			t.Errorf("%s: the table says PCI %s, the mock %s", c.Name, sku.PCIDevice, pci)
		}
	}
	for _, name := range FakeNames() {
		src, err := OpenFake(t.Context(), nil, name)
		if err != nil {
			t.Fatal(err)
		}
		devs, err := src.Devices(t.Context())
		src.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			if why := gpusku.Check(d.Name, d.MemoryMiB, d.ComputeCapability); why != "" && !strings.HasPrefix(d.Name, "Mock ") {
				t.Errorf("%s GPU %d (%s): %s", name, d.Index, d.Name, why)
			}
			sku, _ := gpusku.Lookup(strings.TrimPrefix(d.Name, "Mock "))
			if d.PCIDevice == "" || (sku.PCIDevice != "" && d.PCIDevice != sku.PCIDevice) {
				t.Errorf("%s GPU %d (%s): PCI device %q, want %q", name, d.Index, d.Name, d.PCIDevice, sku.PCIDevice)
			}
		}
	}
}
