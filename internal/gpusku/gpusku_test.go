package gpusku

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, model string
		mem         uint64
		cc, bad     string
	}{
		{"a real H100 SXM", "NVIDIA H100 80GB HBM3", 81559, "9.0", ""},
		{"the mock's H100", "NVIDIA H100 80GB HBM3", 81920, "9.0", ""},
		{"compute capability unknown", "NVIDIA H100 80GB HBM3", 81559, "", ""},
		{"name in another case", "nvidia h100 80gb hbm3", 81559, "9.0", ""},
		{"an H100 with half its memory", "NVIDIA H100 80GB HBM3", 40960, "9.0", "reports 40960 MiB"},
		{"an H100 with too much", "NVIDIA H100 80GB HBM3", 143771, "9.0", "reports 143771 MiB"},
		{"an H100 of the wrong generation", "NVIDIA H100 80GB HBM3", 81559, "8.0", "compute capability 8.0"},
		{"a model not known", "NVIDIA RTX 6000 Ada Generation", 49140, "8.9", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Check(c.model, c.mem, c.cc)
			if (c.bad == "") != (got == "") || !strings.Contains(got, c.bad) {
				t.Fatalf("Check = %q, want one about %q", got, c.bad)
			}
		})
	}
}

// A device whose PCI id is not its model's is flagged; an unknown model,
// an unpinned one or an unreported id is not checked.
func TestCheckPCI(t *testing.T) {
	cases := []struct {
		name, model, pci, bad string
	}{
		{"an H100 that is one", "NVIDIA H100 80GB HBM3", "10de:2330", ""},
		{"upper case", "NVIDIA H100 80GB HBM3", "10DE:2330", ""},
		{"an A100 calling itself an H100", "NVIDIA H100 80GB HBM3", "10de:20b0", "reports PCI device 10de:20b0, but a NVIDIA H100 80GB HBM3 is 10de:2330"},
		{"no id reported", "NVIDIA H100 80GB HBM3", "", ""},
		{"a model the table does not pin", "NVIDIA H100 PCIe", "10de:2331", ""},
		{"a model not known", "NVIDIA L4", "10de:27b8", ""},
	}
	for _, c := range cases {
		got := CheckPCI(c.model, c.pci)
		if (c.bad == "") != (got == "") || !strings.Contains(got, c.bad) {
			t.Errorf("%s: %q, want one about %q", c.name, got, c.bad)
		}
	}
	if got := FormatPCIDevice(0x233010DE); got != "10de:2330" {
		t.Errorf("FormatPCIDevice = %q", got)
	}
	if got := FormatPCIDevice(0); got != "" {
		t.Errorf("FormatPCIDevice(0) = %q", got)
	}
}

// Every known model has a matmul figure, and a name NVML spells in
// another case finds it; an unknown model has none.
func TestMatmulTF32(t *testing.T) {
	for _, s := range Known() {
		if v, ok := MatmulTF32(strings.ToLower(s.Name)); !ok || v <= 0 {
			t.Errorf("%s: no matmul figure (%v, %v)", s.Name, v, ok)
		}
	}
	if v, ok := MatmulTF32("NVIDIA Imaginary 1GB"); ok {
		t.Errorf("an unknown model has a figure: %v", v)
	}
}
