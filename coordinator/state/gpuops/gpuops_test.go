package gpuops

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// effects records what an operation caused.
type effects struct {
	events  []string // kind and subject of each audit event
	details []string
	pending int
}

func (e *effects) Audit(ev command.AuditEvent) {
	e.events = append(e.events, ev.Kind+" "+ev.Subject)
	e.details = append(e.details, ev.Detail)
}
func (e *effects) MarkPending() { e.pending++ }

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// worker has GPUs of those uuids, healthy, its inventory approved.
func worker(uuids ...string) *record.Worker {
	w := &record.Worker{ID: "w1", Status: record.WorkerReady}
	for i, u := range uuids {
		w.Devices = append(w.Devices, command.Device{Index: i, UUID: u, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true})
	}
	ApproveLegacy(w)
	return w
}

// A cordon and its lifting, as a table: what each refuses, the cordons
// left, the events and whether placement is told. The record's map is
// replaced, never edited: a capture holding the old one keeps it.
func TestCordon(t *testing.T) {
	cases := []struct {
		name    string
		before  map[string]string
		c       command.CordonDevice
		err     error
		after   map[string]string
		events  []string
		pending int
	}{
		{"cordon", nil, command.CordonDevice{UUID: "GPU-1", Cordon: true, Reason: "suspect"}, nil,
			map[string]string{"GPU-1": "suspect"}, []string{"gpu.cordoned GPU-1"}, 0},
		{"again: the reason replaced", map[string]string{"GPU-1": "old"}, command.CordonDevice{UUID: "GPU-1", Cordon: true, Reason: "new"}, nil,
			map[string]string{"GPU-1": "new"}, []string{"gpu.cordoned GPU-1"}, 0},
		{"a drain's cordon: its drain audits", nil, command.CordonDevice{UUID: "GPU-1", Cordon: true, Drain: true}, nil,
			map[string]string{"GPU-1": ""}, nil, 0},
		{"lifted: offered again", map[string]string{"GPU-1": "x", "GPU-2": "y"}, command.CordonDevice{UUID: "GPU-1"}, nil,
			map[string]string{"GPU-2": "y"}, []string{"gpu.uncordoned GPU-1"}, 1},
		{"lifting one not there changes nothing", nil, command.CordonDevice{UUID: "GPU-1"}, nil, nil, nil, 0},
		{"a GPU gone from the report may be uncordoned", map[string]string{"GPU-9": "x"}, command.CordonDevice{UUID: "GPU-9"}, nil,
			nil, []string{"gpu.uncordoned GPU-9"}, 1},
		{"lifting the cordon of a GPU neither reported nor cordoned", nil, command.CordonDevice{UUID: "GPU-9"}, stateerr.ErrNotFound, nil, nil, 0},
		{"a GPU not reported is not cordoned", nil, command.CordonDevice{UUID: "GPU-9", Cordon: true}, stateerr.ErrNotFound, nil, nil, 0},
		{"a drain that does not cordon", nil, command.CordonDevice{UUID: "GPU-1", Drain: true}, stateerr.ErrInvalid, nil, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := worker("GPU-1", "GPU-2")
			w.Cordons = c.before
			kept := maps.Clone(c.before)
			var fx effects
			c.c.Now = now
			if err := Cordon(&fx, w, c.c); !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if !maps.Equal(w.Cordons, c.after) || !slices.Equal(fx.events, c.events) || fx.pending != c.pending {
				t.Fatalf("cordons %v, events %v, pending %d; want %v, %v, %d", w.Cordons, fx.events, fx.pending, c.after, c.events, c.pending)
			}
			if !maps.Equal(c.before, kept) {
				t.Fatalf("the old cordons were edited: %v, were %v", c.before, kept)
			}
		})
	}
}

// A clear is asked of a GPU in fault only, and settled by a report that
// shows it back in service or gone; one still in fault stays asked.
func TestClearAndItsSettling(t *testing.T) {
	w := worker("GPU-1", "GPU-2", "GPU-3")
	var fx effects
	if err := Clear(&fx, w, command.ClearGPU{UUID: "GPU-1", Now: now}); !errors.Is(err, stateerr.ErrConflict) {
		t.Fatalf("clear of a healthy GPU: %v, want ErrConflict", err)
	}
	if err := Clear(&fx, w, command.ClearGPU{UUID: "GPU-9", Now: now}); !errors.Is(err, stateerr.ErrNotFound) {
		t.Fatalf("clear of a GPU not there: %v, want ErrNotFound", err)
	}
	for _, u := range []string{"GPU-1", "GPU-2", "GPU-3"} {
		MarkFailed(&fx, w, u, "XID 79", now)
	}
	fx.events = nil
	if InService(w.Devices[0]) {
		t.Fatalf("marked failed, still in service: %+v", w.Devices[0])
	}
	for _, u := range []string{"GPU-3", "GPU-1", "GPU-2", "GPU-1"} {
		if err := Clear(&fx, w, command.ClearGPU{UUID: u, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"GPU-1", "GPU-2", "GPU-3"}; !slices.Equal(w.ClearGPUs, want) {
		t.Fatalf("asked %v, want %v (sorted, once each)", w.ClearGPUs, want)
	}
	next := slices.Clone(w.Devices[:2])
	next[0].Health, next[0].Healthy = HealthRecovering, false // GPU-1 back, GPU-2 still down, GPU-3 gone
	w.Devices = next
	fx.events = nil
	SettleClears(&fx, w, now)
	if !slices.Equal(w.ClearGPUs, []string{"GPU-2"}) || !slices.Equal(fx.events, []string{"gpu.clear_settled GPU-1", "gpu.clear_settled GPU-3"}) {
		t.Fatalf("left %v, events %v", w.ClearGPUs, fx.events)
	}
}

// A GPU failed under a task is marked out of service in a new slice, and
// audited as a change of health; one already out, or not there, is left.
func TestMarkFailed(t *testing.T) {
	w := worker("GPU-1")
	old := w.Devices
	var fx effects
	MarkFailed(&fx, w, "GPU-1", "XID 79", now)
	if d := w.Devices[0]; d.Healthy || d.Health != HealthUnhealthy || d.HealthReason != "XID 79" {
		t.Fatalf("device %+v", d)
	}
	if !old[0].Healthy {
		t.Fatal("the old device list was edited")
	}
	if !slices.Equal(fx.events, []string{"gpu.health GPU-1"}) || fx.details[0] != "healthy -> unhealthy: XID 79" {
		t.Fatalf("events %v %v", fx.events, fx.details)
	}
	MarkFailed(&fx, w, "GPU-1", "again", now)
	MarkFailed(&fx, w, "GPU-9", "gone", now)
	if len(fx.events) != 1 {
		t.Fatalf("a second mark, or one of a GPU not there, audited: %v", fx.events)
	}
}

// Approve brings the GPUs awaiting approval into service, names them,
// and tells placement only when there were any.
func TestApprove(t *testing.T) {
	w := worker("GPU-1")
	w.Devices = append(w.Devices, command.Device{Index: 1, UUID: "GPU-2", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true})
	w.Devices[0].MemoryMiB = 40000
	if got := Unapproved(w); len(got) != 2 {
		t.Fatalf("unapproved %v, want GPU-1 (memory changed) and GPU-2 (new)", got)
	}
	var fx effects
	if got := Approve(&fx, w, command.ApproveDevices{Now: now}); !slices.Equal(got, []string{"GPU-1", "GPU-2"}) || fx.pending != 1 {
		t.Fatalf("approved %v, pending %d", got, fx.pending)
	}
	if got := Approve(&fx, w, command.ApproveDevices{Now: now}); len(got) != 0 || fx.pending != 1 || fx.details[1] != "no GPU was awaiting approval" {
		t.Fatalf("approved again %v, pending %d, %v", got, fx.pending, fx.details)
	}
}

// A repartition approves the GPU's new MIG devices only when the GPU
// itself was approved: it never brings an unapproved GPU into service.
func TestRepartitionApprovesOnlyAnApprovedGPU(t *testing.T) {
	for _, approved := range []bool{false, true} {
		w := worker("GPU-1", "GPU-2")
		if !approved {
			delete(w.ApprovedDevices, "GPU-1")
		}
		w.Devices[0].MIGEnabled = true
		w.Devices = append(w.Devices, command.Device{UUID: "MIG-1-a", Parent: "GPU-1", MIGProfile: "3g.40gb", MemoryMiB: 40192, Healthy: true})
		approveRepartition(w, "GPU-1")
		if _, ok := w.ApprovedDevices["MIG-1-a"]; ok != approved {
			t.Fatalf("GPU approved %v: its MIG device approved %v", approved, ok)
		}
	}
}

// A device report is audited where it differs: a GPU added or gone, a
// change of health, or of its reason alone.
func TestAuditDevices(t *testing.T) {
	w := worker("GPU-1", "GPU-2", "GPU-3")
	w.Devices[2].Healthy, w.Devices[2].Health, w.Devices[2].HealthReason = false, HealthUnhealthy, "XID 79"
	next := slices.Clone(w.Devices[1:])
	next[0].Health, next[0].HealthReason = HealthDegraded, "row remap pending" // GPU-2: healthy -> degraded
	next[1].HealthReason = "XID 48"                                            // GPU-3: the reason alone
	next = append(next, command.Device{Index: 3, UUID: "GPU-4", Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true})
	var fx effects
	AuditDevices(&fx, w, next, now)
	want := []string{"gpu.health GPU-2", "gpu.health GPU-3", "gpu.added GPU-4", "gpu.removed GPU-1"}
	if !slices.Equal(fx.events, want) {
		t.Fatalf("events %v, want %v", fx.events, want)
	}
	if fx.details[1] != "unhealthy -> unhealthy: XID 48" {
		t.Fatalf("the reason's change audited as %q", fx.details[1])
	}
	fx = effects{}
	AuditDevices(&fx, w, slices.Clone(w.Devices), now)
	if len(fx.events) != 0 {
		t.Fatalf("an unchanged report audited %v", fx.events)
	}
}
