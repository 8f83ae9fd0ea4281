package place

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/backfill"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// A view says what a worker's tasks hold (whole, by a share, until
// about when), what is free and what room is left, from the records
// alone.
func TestWorkerViewFromItsTasks(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 4, 4, 0, 0)
	w.Devices[3].Healthy = false
	end := backfill.End{At: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)}
	whole := &record.Job{ID: "whole", Spec: command.JobSpec{Resources: &command.Resources{GPUs: 1}, ExclusiveWorker: true}}
	share := &record.Job{ID: "share", Spec: command.JobSpec{Resources: &command.Resources{GPUs: 1, GPUMemoryMiB: 1000, GPUSharing: "unenforced"}}}
	held := map[string]Holding{
		"a": {Task: &record.Task{ID: "a", Devices: []string{"GPU-w1-0"}}, Job: whole},
		"b": {Task: &record.Task{ID: "b", Devices: []string{"GPU-w1-1"}}, Job: share},
		"c": {Task: &record.Task{ID: "c", Devices: []string{"GPU-w1-1"}}, Job: share},
	}
	ends := map[string]backfill.End{"a": end, "b": {Unknown: true}, "c": end}
	for id := range held {
		w.Hold(id)
	}
	v := NewWorkerView(w, func(id string) Holding { return held[id] }, func(id string) backfill.End { return ends[id] })
	if whole, shared := DeviceUse(w, func(id string) Holding { return held[id] }, map[string]bool{"b": true}); !whole["GPU-w1-0"] || shared["GPU-w1-1"] != 1000 {
		t.Errorf("DeviceUse beside b: whole %v, shared %v; want GPU 0 whole and one 1000 MiB share of GPU 1", whole, shared)
	}
	if len(v.Offered) != 3 {
		t.Fatalf("offered %d devices, want 3 (the unhealthy one is not)", len(v.Offered))
	}
	if d := v.Offered[0]; !d.Whole || d.Shared || !d.End.At.Equal(end.At) {
		t.Errorf("GPU 0: %+v, want held whole until %v", d, end.At)
	}
	if d := v.Offered[1]; d.Whole || !d.Shared || d.Used != 2000 || !d.End.Unknown {
		t.Errorf("GPU 1: %+v, want two shares of 1000 MiB, end unknown", d)
	}
	if len(v.Free) != 1 || v.Free[0].UUID != "GPU-w1-2" {
		t.Errorf("free %v, want GPU 2 alone", v.Free)
	}
	if v.Room != (Room{Whole: 1, Partial: true}) || !v.Exclusive || v.PerJob["share"] != 2 {
		t.Errorf("room %+v, exclusive %v, per job %v", v.Room, v.Exclusive, v.PerJob)
	}
	slots := v.slots(w, command.JobSpec{Resources: &command.Resources{GPUs: 1}}, 1)
	var order []string
	for _, s := range slots {
		order = append(order, s.Devices[0])
	}
	if !slices.Equal(order, []string{"GPU-w1-2", "GPU-w1-0", "GPU-w1-1"}) {
		t.Errorf("slots in order %v, want the free GPU, then the known end, then the unknown", order)
	}
}

// CanRun answers with the state's sentinels, so an assignment refused
// as it applies says why in the protocol's words.
func TestCanRunSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		edit func(w *record.Worker, j *record.Job)
		want error
	}{
		{"ready", func(*record.Worker, *record.Job) {}, nil},
		{"revoked", func(w *record.Worker, _ *record.Job) { w.Status = record.WorkerRevoked }, stateerr.ErrWorkerRevoked},
		{"awaiting approval", func(w *record.Worker, _ *record.Job) { w.Status = record.WorkerPending }, stateerr.ErrWorkerPending},
		{"draining", func(w *record.Worker, _ *record.Job) { w.Status = record.WorkerDraining }, stateerr.ErrConflict},
		{"no such executor", func(_ *record.Worker, j *record.Job) { j.Spec.Executor = "container" }, stateerr.ErrConflict},
		{"targets another worker", func(_ *record.Worker, j *record.Job) {
			j.Spec.Target = &command.Target{Kind: command.TargetWorker, ID: "w2"}
		}, stateerr.ErrConflict},
		{"at max_per_worker", func(_ *record.Worker, j *record.Job) { j.Spec.MaxPerWorker = 1 }, stateerr.ErrConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFleet()
			w := f.worker("w1", 2, 2, 0, 0)
			f.occupy(w, "GPU-w1-0") // a task of job "busy"
			j := f.occupier
			j.Spec.MaxPerWorker = 0
			c.edit(w, j)
			err := CanRun(f, w, j, &record.Task{ID: "t"}, "")
			if (c.want == nil) != (err == nil) || !errors.Is(err, c.want) {
				t.Fatalf("CanRun = %v, want %v", err, c.want)
			}
		})
	}
}

// A worker that could not run the head offers it no backfill slot.
func TestHoldSlotsOnlyWhereTheHeadCouldRun(t *testing.T) {
	f := newFleet()
	w := f.worker("w1", 4, 4, 0, 0)
	j := &record.Job{ID: "head", Spec: command.JobSpec{Executor: "exec", Resources: &command.Resources{GPUs: 2}}}
	if got := HoldSlots(f, w, j, 2); len(got) != 2 || len(got[0].Devices) != 2 {
		t.Fatalf("slots %+v, want two of two GPUs", got)
	}
	for name, edit := range map[string]func(){
		"draining":       func() { w.Status = record.WorkerDraining },
		"other executor": func() { j.Spec.Executor = "container" },
		"other target":   func() { j.Spec.Target = &command.Target{Kind: command.TargetWorker, ID: "w2"} },
	} {
		saved, savedJob := *w, j.Spec
		edit()
		if got := HoldSlots(f, w, j, 2); got != nil {
			t.Errorf("%s: slots %+v, want none", name, got)
		}
		*w, j.Spec = saved, savedJob
	}
}
