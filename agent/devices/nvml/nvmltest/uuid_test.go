//go:build cgo && linux

package nvmltest

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

var uuidPattern = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// uuids reads every device's UUID through lib.
func uuids(t *testing.T, lib nvml.Interface) []string {
	t.Helper()
	n, _ := lib.DeviceGetCount()
	var got []string
	for i := range n {
		u, ret := handle(t, lib, i).GetUUID()
		if ret != nvml.SUCCESS {
			t.Fatalf("GetUUID(%d) = %v", i, ret)
		}
		got = append(got, u)
	}
	return got
}

func TestUUIDOptions(t *testing.T) {
	custom := []string{"GPU-a", "GPU-b", "GPU-c", "GPU-d", "GPU-e", "GPU-f", "GPU-g", "GPU-h"}
	var stable []string
	for i := range 8 {
		stable = append(stable, StableUUID(i))
	}
	tests := []struct {
		name string
		opt  Option
		want []string
	}{
		{"WithUUIDs", WithUUIDs(custom...), custom},
		{"StableUUIDs", StableUUIDs(), stable},
	}
	for _, tt := range tests {
		for _, machine := range Machines() {
			t.Run(tt.name+"/"+machine, func(t *testing.T) {
				lib := New(machine, tt.opt).Interface()
				if got := uuids(t, lib); !slices.Equal(got, tt.want) {
					t.Fatalf("UUIDs %v, want %v", got, tt.want)
				}
				for i, u := range tt.want {
					if d, ret := lib.DeviceGetHandleByUUID(u); ret != nvml.SUCCESS || d != handle(t, lib, i) {
						t.Errorf("DeviceGetHandleByUUID(%q) = %v %v, want device %d", u, d, ret, i)
					}
				}
			})
		}
	}
}

func TestStableUUIDsAreValidAndStable(t *testing.T) {
	a, b := uuids(t, New(DGXA100, StableUUIDs()).Interface()), uuids(t, New(DGXA100, StableUUIDs()).Interface())
	if !slices.Equal(a, b) {
		t.Errorf("two machines: %v and %v", a, b)
	}
	for _, u := range a {
		if !uuidPattern.MatchString(u) {
			t.Errorf("%q is not a GPU UUID", u)
		}
	}
	// Without the option the mock servers' UUIDs are random.
	if c, d := uuids(t, New(DGXA100).Interface()), uuids(t, New(DGXA100).Interface()); slices.Equal(c, d) {
		t.Errorf("random UUIDs repeat: %v", c)
	}
}

func TestWithUUIDsRejectsMistakes(t *testing.T) {
	tests := []struct {
		name  string
		uuids []string
		want  string
	}{
		{"too few", []string{"GPU-a"}, "1 UUIDs for 8 devices"},
		{"duplicate", []string{"GPU-a", "GPU-b", "GPU-c", "GPU-d", "GPU-e", "GPU-f", "GPU-g", "GPU-a"}, "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := panicMessage(func() { New(DGXH100, WithUUIDs(tt.uuids...)) })
			if !strings.Contains(msg, tt.want) {
				t.Errorf("panic %q, want %q", msg, tt.want)
			}
		})
	}
}
