package httpapi

import (
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A device report's health word: degraded is offered (healthy true), the
// words out of service never are, and a word outside the contract is
// refused.
func TestDeviceHealthWords(t *testing.T) {
	cases := []struct {
		health  string
		healthy bool
		ok      bool
	}{
		{"", true, true},
		{api.HealthHealthy, true, true},
		{api.HealthDegraded, true, true},
		{api.HealthDegraded, false, true},
		{api.HealthUnhealthy, false, true},
		{api.HealthUnhealthy, true, false},
		{api.HealthRecovering, true, false},
		{api.HealthUnknown, true, false},
		{"sickly", false, false},
	}
	for _, c := range cases {
		d := api.Device{UUID: "GPU-1", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: c.healthy, Health: c.health}
		if err := validateDevices([]api.Device{d}); (err == nil) != c.ok {
			t.Errorf("health %q, healthy %v: %v, want accepted %v", c.health, c.healthy, err, c.ok)
		}
	}
}
