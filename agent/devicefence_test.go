package agent

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// nodeSource is a device source that names its GPUs' device files.
type nodeSource struct {
	devices.Source
	nodes map[string]string
	err   error
}

func (s nodeSource) DeviceNodes(context.Context) (map[string]string, error) { return s.nodes, s.err }

// A task is fenced off the device file of every GPU it was not given: a
// whole GPU given keeps its own, a MIG device its GPU's, and a task given
// nothing is fenced off all. A source that cannot say fences nothing.
func TestFencedDevices(t *testing.T) {
	devs := []api.Device{
		{Index: 0, UUID: "GPU-0"},
		{Index: 1, UUID: "GPU-1", MIGEnabled: true},
		{Index: 1, UUID: "MIG-1a", Parent: "GPU-1"},
		{Index: 1, UUID: "MIG-1b", Parent: "GPU-1"},
		{Index: 2, UUID: "GPU-2"},
	}
	nodes := map[string]string{"GPU-0": "/dev/nvidia0", "GPU-1": "/dev/nvidia1", "GPU-2": "/dev/nvidia2"}
	for _, tc := range []struct {
		name  string
		src   devices.Source
		given []string
		want  []string
	}{
		{"one GPU", nodeSource{devices.Static(devs...), nodes, nil}, []string{"GPU-2"}, []string{"/dev/nvidia0", "/dev/nvidia1"}},
		{"two GPUs", nodeSource{devices.Static(devs...), nodes, nil}, []string{"GPU-0", "GPU-2"}, []string{"/dev/nvidia1"}},
		{"a MIG device keeps its GPU's file", nodeSource{devices.Static(devs...), nodes, nil}, []string{"MIG-1b"}, []string{"/dev/nvidia0", "/dev/nvidia2"}},
		{"no GPU", nodeSource{devices.Static(devs...), nodes, nil}, nil, []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2"}},
		{"a source that cannot say", nodeSource{devices.Static(devs...), nil, errors.New("nvml: gone")}, nil, nil},
		{"a source without device files", devices.Static(devs...), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{cfg: Config{Devices: tc.src}, log: slog.New(slog.DiscardHandler), devices: devs}
			a.readDeviceNodes(t.Context())
			if got := a.fencedDevices(tc.given); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("fenced %v, want %v", got, tc.want)
			}
		})
	}
}
