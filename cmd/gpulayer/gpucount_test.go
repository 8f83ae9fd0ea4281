package main

import (
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A cordoned GPU reads cordoned in the health column and in the counts;
// uncordoning says offered again only when the GPU is, and otherwise why
// it is not.
func TestCordonedGPUsAreSaidSo(t *testing.T) {
	devs := []api.Device{
		{UUID: "GPU-a", Healthy: true, Health: api.HealthHealthy},
		{UUID: "GPU-b", Cordoned: true, Health: api.HealthUnknown, HealthReason: "cordoned by an admin"},
		{UUID: "GPU-c", Health: api.HealthUnhealthy, HealthReason: "xid 79"},
	}
	if n := countGPUs(devs); n.healthy != 1 || n.unhealthy != 2 || n.cordoned != 1 {
		t.Fatalf("counts %+v", n)
	}
	if got := deviceHealth(devs[1]); got != "cordoned" {
		t.Fatalf("a cordoned GPU's health column reads %q", got)
	}
	w := api.Worker{Devices: devs}
	cases := []struct{ uuid, want string }{
		{"GPU-a", "offered again"},
		{"GPU-c", "uncordoned; not offered: xid 79"},
	}
	for _, c := range cases {
		if got := gpuNow(w, c.uuid, "offered again"); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.uuid, got, c.want)
		}
	}
}
