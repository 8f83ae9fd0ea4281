//go:build cgo && linux

package nvml

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/health"
)

// Lines appended to the faults file reach the watcher as the driver's
// events would: an Xid on the GPU named, a GPU that falls off the bus;
// a malformed line or an unknown GPU is skipped and later lines still
// arrive; a line is delivered only once it is whole.
func TestFakeFaultsFileDeliversFaults(t *testing.T) {
	file := filepath.Join(t.TempDir(), "faults")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	src, err := OpenFakeWithFaults(ctx, slog.New(slog.DiscardHandler), FakeDGXH100, "seed", file)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	devs, err := src.Devices(ctx)
	if err != nil || len(devs) != 8 {
		t.Fatalf("devices: %d %v", len(devs), err)
	}
	if devs[0].UUID != seededUUID("seed", FakeDGXH100, 0) {
		t.Fatalf("UUIDs are not the seeded ones: %s", devs[0].UUID)
	}
	var uuids []string
	for _, d := range devs {
		uuids = append(uuids, d.UUID)
	}
	var mu sync.Mutex
	got := map[string][]health.Observation{}
	seen := make(chan struct{}, 64)
	go src.Watch(ctx, uuids, WatchOptions{Poll: 20 * time.Millisecond, Wait: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, func(o health.Observation) {
		if o.Kind == health.Watched || o.Kind == health.NoRecoveryPending {
			return
		}
		mu.Lock()
		got[o.UUID] = append(got[o.UUID], o)
		mu.Unlock()
		seen <- struct{}{}
	})
	appendLine := func(s string) {
		t.Helper()
		f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			mu.Lock()
			ok := cond()
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-seen:
			case <-deadline:
				t.Fatalf("timed out waiting for %s; observed %v", what, got)
			}
		}
	}
	appendLine("# a comment\nnot a fault\nGPU-nope xid 48\n" + uuids[1] + " xid 4") // the last line is not whole yet
	appendLine("8\n")
	waitFor("Xid 48 on GPU 1", func() bool {
		for _, o := range got[uuids[1]] {
			if o.Kind == health.XidError && o.Xid == 48 {
				return true
			}
		}
		return false
	})
	appendLine(fmt.Sprintf("%s lost\n", uuids[2]))
	waitFor("GPU 2 to fall off the bus", func() bool {
		for _, o := range got[uuids[2]] {
			if o.Kind == health.Lost || (o.Kind == health.XidError && o.Xid == 79) {
				return true
			}
		}
		return false
	})
	mu.Lock()
	defer mu.Unlock()
	for _, o := range got[uuids[1]] {
		if o.Kind == health.XidError && o.Xid != 48 {
			t.Fatalf("a partial line was delivered early: %+v", o)
		}
	}
	if len(got[uuids[0]]) != 0 {
		t.Fatalf("a GPU no line named saw %v", got[uuids[0]])
	}
}
