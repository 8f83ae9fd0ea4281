package agent

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A device the inventory could not read whole is not offered, and its
// report never says healthy for it: the coordinator reads the health word
// as PROTOCOL.md has it, a device reported healthy being offered.
func TestDeviceViewNeverCallsAnUnofferedDeviceHealthy(t *testing.T) {
	a := &Agent{devices: []api.Device{
		{Index: 0, UUID: "GPU-read", Name: "H100", MemoryMiB: 81920, Healthy: true},
		{Index: 1, UUID: "GPU-half", Healthy: false},
	}}
	tr := health.New(health.Policy{}, time.Unix(0, 0), "boot", []string{"GPU-read", "GPU-half"}, nil)
	for _, u := range []string{"GPU-read", "GPU-half"} {
		tr.Observe(time.Unix(1, 0), health.Observation{UUID: u, Kind: health.Watched})
	}
	a.health = &gpuHealth{tracker: tr}
	got := a.deviceView()
	if d := got[0]; !d.Healthy || d.Health != string(health.Healthy) {
		t.Fatalf("a device read whole: %+v", d)
	}
	if d := got[1]; d.Healthy || d.Health == string(health.Healthy) || d.Health == string(health.Degraded) || d.HealthReason == "" {
		t.Fatalf("a device the inventory could not read: %+v", d)
	}
}
