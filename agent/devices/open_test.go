package devices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

var uuidPattern = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestOpenFakes(t *testing.T) {
	tests := []struct {
		fake              string
		count             int
		name              string
		memoryMiB         uint64
		computeCapability string
	}{
		// go-nvml v0.13.4-1 names its A100 mock "Mock NVIDIA …".
		{"dgxa100", 8, "Mock NVIDIA A100-SXM4-40GB", 40960, "8.0"},
		{"dgxh100", 8, "NVIDIA H100 80GB HBM3", 81920, "9.0"},
		{"dgxh200", 8, "NVIDIA H200 141GB HBM3e", 144384, "9.0"},
		{"dgxb200", 8, "NVIDIA B200 180GB HBM3e", 184320, "10.0"},
	}
	for _, tt := range tests {
		t.Run(tt.fake, func(t *testing.T) {
			src, _ := mustOpen(t, tt.fake)
			devs, err := src.Devices(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(devs) != tt.count {
				t.Fatalf("got %d GPUs, want %d", len(devs), tt.count)
			}
			seen := map[string]bool{}
			for i, d := range devs {
				if d.Index != i {
					t.Errorf("GPU %d has index %d", i, d.Index)
				}
				if !uuidPattern.MatchString(d.UUID) || seen[d.UUID] {
					t.Errorf("GPU %d: bad or repeated uuid %q", i, d.UUID)
				}
				seen[d.UUID] = true
				if d.Name != tt.name || d.MemoryMiB != tt.memoryMiB || d.ComputeCapability != tt.computeCapability {
					t.Errorf("GPU %d = %q %d MiB cc %q", i, d.Name, d.MemoryMiB, d.ComputeCapability)
				}
				if d.DriverVersion == "" || !strings.HasPrefix(d.CUDAVersion, "12.") || !d.Healthy {
					t.Errorf("GPU %d: driver %q cuda %q healthy %v", i, d.DriverVersion, d.CUDAVersion, d.Healthy)
				}
			}
		})
	}
}

func TestOpenNone(t *testing.T) {
	src, logs := mustOpen(t, FakeNone)
	devs, err := src.Devices(t.Context())
	if err != nil || len(devs) != 0 {
		t.Fatalf("Devices = %v, %v; want none", devs, err)
	}
	if lines := logLines(t, logs); len(lines) != 1 || lines[0]["level"] != "INFO" {
		t.Errorf("want one info line, got %v", lines)
	}
}

// TestOpenReal takes the real NVML path. On a machine without a driver (or
// in a build without cgo) that must give zero GPUs, no error, no crash and
// exactly one warning saying why. On a GPU machine it must give healthy GPUs
// and no warning (an H200 run logged only its INFO topology summary).
func TestOpenReal(t *testing.T) {
	src, logs := mustOpen(t, FakeReal)
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, logs)
	if len(devs) > 0 {
		t.Logf("NVML found %d GPUs; checking the GPU-machine expectations", len(devs))
		for _, d := range devs {
			if !uuidPattern.MatchString(d.UUID) || d.Name == "" || d.MemoryMiB == 0 || d.DriverVersion == "" {
				t.Errorf("GPU %+v", d)
			}
		}
		// The topology summary is logged at INFO; nothing may warn.
		for _, l := range lines {
			if l["level"] != "INFO" {
				t.Errorf("GPUs found but logged %v", l)
			}
		}
		return
	}
	if len(lines) != 1 {
		t.Fatalf("want exactly one log line, got %d: %v", len(lines), lines)
	}
	l := lines[0]
	if l["level"] != "WARN" || l["component"] != "devices" ||
		!strings.Contains(l["msg"].(string), "reporting zero GPUs") || l["reason"] == nil {
		t.Errorf("log line = %v", l)
	}
	t.Logf("logged: %s reason=%s", l["msg"], l["reason"])
}

func TestOpenUnknownFake(t *testing.T) {
	_, err := Open(t.Context(), slog.New(slog.DiscardHandler), "dgx-1")
	if !errors.Is(err, ErrUnknownFake) {
		t.Fatalf("err = %v, want ErrUnknownFake", err)
	}
	for _, name := range FakeNames() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %q", err, name)
		}
	}
}

func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, fake := range []string{FakeReal, FakeNone, "dgxh100"} {
		if _, err := Open(ctx, nil, fake); !errors.Is(err, context.Canceled) {
			t.Errorf("Open(%q) err = %v, want context.Canceled", fake, err)
		}
	}
}

func TestDevicesAfterClose(t *testing.T) {
	for _, fake := range []string{FakeNone, "dgxa100"} {
		src, err := Open(t.Context(), slog.New(slog.DiscardHandler), fake)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(src.Close(), src.Close()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, err := src.Devices(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("%q: Devices after Close = %v, want ErrClosed", fake, err)
		}
	}
}

func TestStatic(t *testing.T) {
	in := []api.Device{{Index: 1, UUID: "GPU-b"}, {Index: 0, UUID: "GPU-a"}}
	src := Static(in...)
	in[0].UUID = "changed"
	got, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UUID != "GPU-a" || got[1].UUID != "GPU-b" {
		t.Fatalf("Devices = %+v; want a sorted copy", got)
	}
	got[0].UUID = "mutated"
	again, _ := src.Devices(t.Context())
	if again[0].UUID != "GPU-a" {
		t.Error("callers can mutate the source's devices")
	}
}

// mustOpen opens fake with a JSON logger into the returned buffer and closes
// the source when the test ends.
func mustOpen(t *testing.T, fake string) (Source, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	src, err := Open(t.Context(), slog.New(slog.NewJSONHandler(&logs, nil)), fake)
	if err != nil {
		t.Fatalf("Open(%q): %v", fake, err)
	}
	t.Cleanup(func() {
		if err := src.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return src, &logs
}

func logLines(t *testing.T, logs *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, raw := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		lines = append(lines, m)
	}
	return lines
}
