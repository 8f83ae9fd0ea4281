//go:build cgo && linux

package nvml

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// TestMockServersMatchFakeSpecs reads every go-nvml mock server through
// inventory and checks it against fakeSpecs, which is what builds without
// cgo serve instead. It keeps the two in step.
func TestMockServersMatchFakeSpecs(t *testing.T) {
	if len(fakeServers) != len(fakeSpecs) {
		t.Fatalf("fakeServers has %d sets, fakeSpecs %d", len(fakeServers), len(fakeSpecs))
	}
	for name, spec := range fakeSpecs {
		t.Run(name, func(t *testing.T) {
			newServer, ok := fakeServers[name]
			if !ok {
				t.Fatalf("no mock server for %q", name)
			}
			devs, problems, err := inventory(t.Context(), mustInit(t, newServer()))
			if err != nil || len(problems) != 0 {
				t.Fatalf("inventory: err=%v problems=%v", err, problems)
			}
			if len(devs) != spec.count {
				t.Fatalf("got %d devices, want %d", len(devs), spec.count)
			}
			for i, d := range devs {
				want := api.Device{
					Index: i, UUID: d.UUID, Name: spec.name, MemoryMiB: spec.memoryMiB,
					DriverVersion: spec.driverVersion, CUDAVersion: spec.cudaVersion,
					ComputeCapability: spec.computeCapability, PCIDevice: spec.pciDevice, Healthy: true,
				}
				if !d.Equal(want) {
					t.Errorf("device %d:\n got %+v\nwant %+v", i, d, want)
				}
			}
		})
	}
}

func TestInitFailureMakesNoFurtherCalls(t *testing.T) {
	tests := []struct {
		ret  gonvml.Return
		want string
	}{
		{gonvml.ERROR_LIBRARY_NOT_FOUND, "libnvidia-ml.so.1 not found"},
		{gonvml.ERROR_DRIVER_NOT_LOADED, "kernel driver not loaded"},
		{gonvml.ERROR_NO_PERMISSION, "no permission"},
		{gonvml.ERROR_LIB_RM_VERSION_MISMATCH, "versions differ"},
		{gonvml.Return(12345), "NVML return code 12345"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			// A bare moq mock panics on any method whose func is unset, so
			// this proves nothing but Init is called.
			lib := &mock.Interface{InitFunc: func() gonvml.Return { return tt.ret }}
			src, err := openLib(t.Context(), nil, lib)
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			if src != nil {
				t.Fatal("got a source after a failed Init")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to mention %q", err, tt.want)
			}
			if n := len(lib.InitCalls()); n != 1 {
				t.Errorf("Init called %d times", n)
			}
		})
	}
}

// TestOpenMissingLibrary goes through the real go-nvml loader with a library
// path that cannot exist, so it behaves the same with or without a driver.
func TestOpenMissingLibrary(t *testing.T) {
	lib := gonvml.New(gonvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1"))
	_, err := openLib(t.Context(), nil, lib)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("err = %v, want ErrUnavailable saying the library was not found", err)
	}
}

func TestDeviceFailures(t *testing.T) {
	const bad = 3
	lost := gonvml.ERROR_GPU_IS_LOST
	tests := []struct {
		name        string
		break_      func(s *server.Server, d *server.Device)
		wantHealthy bool
		wantReason  string // in the logged reason when unhealthy
		check       func(t *testing.T, d api.Device)
	}{
		{
			name: "handle",
			break_: func(s *server.Server, _ *server.Device) {
				next := s.DeviceGetHandleByIndexFunc
				s.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
					if i == bad {
						return nil, lost
					}
					return next(i)
				}
			},
			wantReason: "gpu 3: handle: GPU is lost",
			check: func(t *testing.T, d api.Device) {
				if d.UUID != "" || d.Name != "" {
					t.Errorf("device without a handle has uuid %q name %q", d.UUID, d.Name)
				}
			},
		},
		{
			name: "uuid",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetUUIDFunc = func() (string, gonvml.Return) { return "", lost }
			},
			wantReason: "gpu 3: uuid: GPU is lost",
		},
		{
			name: "empty uuid",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.SUCCESS }
			},
			wantReason: "gpu 3: uuid: empty answer",
		},
		{
			name: "name",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetNameFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_UNKNOWN }
			},
			wantReason: "gpu 3: name: unknown NVML error",
			check: func(t *testing.T, d api.Device) {
				if !strings.HasPrefix(d.UUID, "GPU-") {
					t.Errorf("fields read before the failure are kept; uuid = %q", d.UUID)
				}
			},
		},
		{
			name: "memory",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{}, lost }
			},
			wantReason: "gpu 3: memory: GPU is lost",
		},
		{
			name: "zero memory",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetMemoryInfoFunc = func() (gonvml.Memory, gonvml.Return) { return gonvml.Memory{}, gonvml.SUCCESS }
			},
			wantReason: "gpu 3: memory: empty answer",
		},
		{
			name: "compute capability is optional",
			break_: func(_ *server.Server, d *server.Device) {
				d.GetCudaComputeCapabilityFunc = func() (int, int, gonvml.Return) { return 0, 0, gonvml.ERROR_NOT_SUPPORTED }
			},
			wantHealthy: true,
			check: func(t *testing.T, d api.Device) {
				if d.ComputeCapability != "" {
					t.Errorf("compute capability = %q, want empty", d.ComputeCapability)
				}
			},
		},
		{
			name: "versions are optional",
			break_: func(s *server.Server, _ *server.Device) {
				s.SystemGetDriverVersionFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_NOT_SUPPORTED }
				s.SystemGetCudaDriverVersionFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
			},
			wantHealthy: true,
			check: func(t *testing.T, d api.Device) {
				if d.DriverVersion != "" || d.CUDAVersion != "" {
					t.Errorf("versions = %q, %q, want empty", d.DriverVersion, d.CUDAVersion)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := dgxh100.New()
			tt.break_(srv, srv.Devices[bad].(*server.Device))
			var logs bytes.Buffer
			src := mustOpen(t, &logs, srv)

			devs, err := src.Devices(t.Context())
			if err != nil {
				t.Fatalf("Devices: %v", err)
			}
			if len(devs) != 8 {
				t.Fatalf("got %d devices, want all 8 reported", len(devs))
			}
			for i, d := range devs {
				if d.Index != i {
					t.Fatalf("devices not sorted by index: %d at %d", d.Index, i)
				}
				if want := i != bad || tt.wantHealthy; d.Healthy != want {
					t.Errorf("device %d healthy = %v, want %v", i, d.Healthy, want)
				}
			}
			if tt.check != nil {
				tt.check(t, devs[bad])
			}
			if tt.wantHealthy {
				if logs.Len() != 0 {
					t.Errorf("unexpected log: %s", logs.String())
				}
				return
			}
			if got := logs.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, tt.wantReason) {
				t.Errorf("want one log line with %q, got:\n%s", tt.wantReason, got)
			}
		})
	}
}

func TestDeviceCountFailureIsAnError(t *testing.T) {
	srv := dgxh100.New()
	srv.DeviceGetCountFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_UNKNOWN }
	src := mustOpen(t, nil, srv)
	devs, err := src.Devices(t.Context())
	if !errors.Is(err, ErrQuery) || devs != nil {
		t.Fatalf("Devices = %v, %v; want ErrQuery", devs, err)
	}
}

func TestUnhealthyLoggedOnChangeOnly(t *testing.T) {
	srv := dgxh100.New()
	dev := srv.Devices[5].(*server.Device)
	healthyUUID := dev.GetUUIDFunc
	var logs bytes.Buffer
	src := mustOpen(t, &logs, srv)
	read := func() {
		t.Helper()
		if _, err := src.Devices(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	dev.GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
	read()
	read()
	if n := strings.Count(logs.String(), "flagged unhealthy"); n != 1 {
		t.Fatalf("two identical reads logged %d warnings:\n%s", n, logs.String())
	}
	dev.GetUUIDFunc = healthyUUID
	read()
	read()
	if n := strings.Count(logs.String(), "all GPUs healthy again"); n != 1 {
		t.Fatalf("recovery logged %d times:\n%s", n, logs.String())
	}
}

func TestCloseShutsDownOnce(t *testing.T) {
	srv := dgxh100.New()
	src, err := openLib(t.Context(), nil, srv)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := src.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if n := len(srv.ShutdownCalls()); n != 1 {
		t.Errorf("Shutdown called %d times, want 1", n)
	}
	if _, err := src.Devices(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Devices after Close: %v, want ErrClosed", err)
	}
}

func TestDevicesHonoursContext(t *testing.T) {
	src := mustOpen(t, nil, dgxh100.New())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := src.Devices(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := openLib(ctx, nil, &mock.Interface{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("openLib err = %v, want context.Canceled", err)
	}
}

func TestConcurrentReads(t *testing.T) {
	src := mustOpen(t, nil, dgxh100.New())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			devs, err := src.Devices(t.Context())
			if err != nil || len(devs) != 8 {
				t.Errorf("Devices = %d devices, %v", len(devs), err)
			}
		})
	}
	wg.Wait()
}

func TestFormatCUDAVersion(t *testing.T) {
	for in, want := range map[int]string{12040: "12.4", 12060: "12.6", 13000: "13.0", 11080: "11.8", 0: "", -1: ""} {
		if got := formatCUDAVersion(in); got != want {
			t.Errorf("formatCUDAVersion(%d) = %q, want %q", in, got, want)
		}
	}
}

func mustInit(t *testing.T, lib gonvml.Interface) gonvml.Interface {
	t.Helper()
	if ret := lib.Init(); ret != gonvml.SUCCESS {
		t.Fatalf("Init: %d", ret)
	}
	return lib
}

// mustOpen opens lib as a Source logging text to logs (if not nil) and
// closes it when the test ends.
func mustOpen(t *testing.T, logs *bytes.Buffer, lib gonvml.Interface) *Source {
	t.Helper()
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	src, err := openLib(t.Context(), logger, lib)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}
