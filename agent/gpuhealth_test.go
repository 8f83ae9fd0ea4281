package agent

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Tasks on MIG devices are given the MIG devices' UUIDs, never their
// GPU's: a fault of the GPU must reach them, and a fault that names one
// MIG device must reach that device alone.
func TestGPUFaultsReachTheirMIGDevices(t *testing.T) {
	a := &Agent{devices: []api.Device{
		{UUID: "GPU-1"},
		{UUID: "MIG-1a", Parent: "GPU-1"},
		{UUID: "MIG-1b", Parent: "GPU-1"},
		{UUID: "GPU-2"},
		{UUID: "MIG-2a", Parent: "GPU-2"},
	}}
	cases := []struct {
		name      string
		fail, got []string
	}{
		{"a GPU in MIG mode and its devices", []string{"GPU-1"}, []string{"GPU-1", "MIG-1a", "MIG-1b"}},
		{"one MIG device alone", []string{"MIG-2a"}, []string{"MIG-2a"}},
		{"nothing", nil, nil},
	}
	for _, c := range cases {
		if got := a.withMIGDevices(c.fail); !slices.Equal(got, c.got) {
			t.Errorf("%s: %v, want %v", c.name, got, c.got)
		}
	}
}
