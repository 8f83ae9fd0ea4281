package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// waitDrained returns once the GPU holds no task, and gives up, naming
// the tasks, when the bound passes first; a stopping agent stops it.
func TestWaitDrained(t *testing.T) {
	start := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	t.Run("drains", func(t *testing.T) {
		clk := clock.NewFake(start)
		var polls atomic.Int32
		done := make(chan error, 1)
		go func() {
			done <- waitDrained(t.Context(), clk, time.Minute, func() []string {
				if polls.Add(1) < 3 {
					return []string{"t-1"}
				}
				return nil
			})
		}()
		for range 2 {
			waitForWaiter(t, clk)
			clk.Advance(migPoll)
		}
		if err := <-done; err != nil || polls.Load() != 3 {
			t.Fatalf("%v after %d polls", err, polls.Load())
		}
	})
	t.Run("bound", func(t *testing.T) {
		clk := clock.NewFake(start)
		done := make(chan error, 1)
		go func() {
			done <- waitDrained(t.Context(), clk, 3*time.Second, func() []string { return []string{"t-1", "t-2"} })
		}()
		for range 3 {
			waitForWaiter(t, clk)
			clk.Advance(migPoll)
		}
		err := <-done
		if !errors.Is(err, errDrainBound) || !strings.Contains(err.Error(), "t-1, t-2") || !strings.Contains(err.Error(), "3s") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		clk := clock.NewFake(start)
		if err := waitDrained(ctx, clk, time.Minute, func() []string { return []string{"t-1"} }); !errors.Is(err, context.Canceled) {
			t.Fatalf("%v", err)
		}
	})
}

// waitForWaiter waits until something waits on clk.
func waitForWaiter(t *testing.T, clk *clock.Fake) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nothing waits on the clock")
		}
		time.Sleep(time.Millisecond)
	}
}

// An order is taken once per generation; its outcome is stamped on its
// GPU only, failure and all.
func TestMIGOrdersAreTakenOnceAndReported(t *testing.T) {
	var m migLayouts
	o := api.MIGLayoutOrder{UUID: "GPU-1", Layout: []string{"7g.80gb"}, Generation: 5}
	if !m.take(o) || m.take(o) {
		t.Fatal("an order was taken twice, or not at all")
	}
	devs := []api.Device{{UUID: "GPU-1"}, {UUID: "MIG-1", Parent: "GPU-1"}}
	m.stamp(devs)
	if devs[0].MIGRequest != 0 {
		t.Fatalf("an order in progress was reported: %+v", devs[0])
	}
	m.settle("GPU-1", 5, errors.New("no room"))
	m.stamp(devs)
	if devs[0].MIGRequest != 5 || devs[0].MIGError != "no room" || devs[1].MIGRequest != 0 {
		t.Fatalf("stamped %+v", devs)
	}
	if m.take(api.MIGLayoutOrder{UUID: "GPU-1", Generation: 4}) || !m.take(api.MIGLayoutOrder{UUID: "GPU-1", Generation: 6}) {
		t.Fatal("an older order was taken, or a newer one refused")
	}
	// An order the last answer no longer carries, or carries replaced, is
	// not acted on once its GPU has drained.
	m.heard([]api.MIGLayoutOrder{{UUID: "GPU-1", Generation: 6}})
	if !m.stillOrdered(api.MIGLayoutOrder{UUID: "GPU-1", Generation: 6}) {
		t.Fatal("a standing order reads withdrawn")
	}
	m.heard([]api.MIGLayoutOrder{{UUID: "GPU-1", Generation: 7}})
	if m.stillOrdered(api.MIGLayoutOrder{UUID: "GPU-1", Generation: 6}) {
		t.Fatal("a replaced order reads standing")
	}
	m.heard(nil)
	if m.stillOrdered(api.MIGLayoutOrder{UUID: "GPU-1", Generation: 7}) {
		t.Fatal("a cleared order reads standing")
	}
}
