//go:build cgo && linux

package nvml

import (
	"errors"
	"testing"
)

// Each GPU of a mock server maps to the device file of its minor number;
// a closed source answers ErrClosed.
func TestDeviceNodesFromMinorNumbers(t *testing.T) {
	src, err := OpenFake(t.Context(), nil, FakeDGXH100)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := src.DeviceNodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(devs) || len(devs) != 8 {
		t.Fatalf("%d nodes for %d GPUs, want 8 each", len(nodes), len(devs))
	}
	for _, d := range devs {
		// go-nvml's mock servers number minors as they index GPUs.
		if want := nodeName(d.Index); nodes[d.UUID] != want {
			t.Errorf("GPU %d (%s): node %q, want %q", d.Index, d.UUID, nodes[d.UUID], want)
		}
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := src.DeviceNodes(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
}
