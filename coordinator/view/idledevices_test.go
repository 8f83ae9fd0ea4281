package view

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The GPUs of a worker that is offline, revoked, draining, stopping or
// awaiting approval are never shown healthy (none of them is offered a
// task); those of a worker that may take work are shown as their agent
// reports them.
func TestIdleWorkersGPUsAreNotHealthy(t *testing.T) {
	reported := []command.Device{
		{UUID: "GPU-1", Healthy: true, Health: api.HealthHealthy},
		{UUID: "GPU-2", Healthy: true},
		{UUID: "GPU-3", Health: api.HealthUnhealthy, HealthReason: "xid 79"},
	}
	cases := []struct {
		status      string
		healthy     int
		health      string // of every device, where set
		awaiting    bool
		reasonNames string
	}{
		{api.WorkerReady, 2, "", false, ""},
		{api.WorkerDraining, 0, api.HealthUnknown, false, "is draining"},
		{api.WorkerStopping, 0, api.HealthUnknown, false, "is stopping"},
		{api.WorkerOffline, 0, api.HealthUnknown, false, "is offline"},
		{api.WorkerRevoked, 0, api.HealthUnknown, false, "is revoked"},
		{api.WorkerPending, 0, "", true, "awaits approval"},
	}
	for _, c := range cases {
		t.Run(c.status, func(t *testing.T) {
			devs := append([]command.Device(nil), reported...)
			v := Worker(state.WorkerRecord{Worker: state.Worker{ID: "w1", Status: c.status, Devices: devs}})
			healthy := 0
			for i, d := range v.Devices {
				if d.Healthy {
					healthy++
				}
				if c.health != "" && d.Health != c.health {
					t.Errorf("%s: health %q, want %q", d.UUID, d.Health, c.health)
				}
				if d.PendingApproval != c.awaiting {
					t.Errorf("%s: pending approval %t", d.UUID, d.PendingApproval)
				}
				if c.reasonNames != "" && !strings.Contains(d.HealthReason, c.reasonNames) {
					t.Errorf("%s: reason %q lacks %q", d.UUID, d.HealthReason, c.reasonNames)
				}
				if !reflect.DeepEqual(reported[i], devs[i]) {
					t.Errorf("the stored record was changed: %+v", devs[i])
				}
			}
			if healthy != c.healthy {
				t.Fatalf("%d healthy GPUs, want %d", healthy, c.healthy)
			}
		})
	}
}
