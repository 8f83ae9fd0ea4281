//go:build cgo && linux

package integration

import (
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// fixtureSource is the device source an agent reads m through, as it
// reads the system's NVML.
func fixtureSource(t *testing.T, m *nvmltest.Machine) *nvml.Source {
	t.Helper()
	src, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// deviceOf is device uuid of worker id as an admin reads it (zero when
// it cannot be read).
func deviceOf(t *testing.T, admin *client.Client, id, uuid string) api.Device {
	w, err := admin.Worker(t.Context(), id)
	if err != nil {
		return api.Device{}
	}
	i := slices.IndexFunc(w.Devices, func(d api.Device) bool { return d.UUID == uuid })
	if i < 0 {
		return api.Device{}
	}
	return w.Devices[i]
}

// waitHealthy waits until worker id reports every one of gpus healthy.
func waitHealthy(t *testing.T, admin *client.Client, id string, gpus []api.Device) {
	t.Helper()
	coordinatortest.WaitFor(t, 30*time.Second, "every GPU to be reported healthy", func() bool {
		for _, g := range gpus {
			if d := deviceOf(t, admin, id, g.UUID); !d.Healthy || d.Health != api.HealthHealthy {
				return false
			}
		}
		return true
	})
}
