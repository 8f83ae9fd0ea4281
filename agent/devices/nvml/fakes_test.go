package nvml

import (
	"errors"
	"regexp"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

var uuidPattern = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestOpenFake runs in builds with and without cgo: with cgo it reads
// go-nvml's mock servers, without it the pure-Go table.
func TestOpenFake(t *testing.T) {
	names := FakeNames()
	if !slices.IsSorted(names) || len(names) != 4 {
		t.Fatalf("FakeNames = %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			spec := fakeSpecs[name]
			src, err := OpenFake(t.Context(), nil, name)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = src.Close() })
			first, err := src.Devices(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != spec.count {
				t.Fatalf("got %d devices, want %d", len(first), spec.count)
			}
			seen := map[string]bool{}
			for i, d := range first {
				if !uuidPattern.MatchString(d.UUID) || seen[d.UUID] {
					t.Errorf("device %d: bad or repeated uuid %q", i, d.UUID)
				}
				seen[d.UUID] = true
				if d.Index != i || d.Name != spec.name || d.MemoryMiB != spec.memoryMiB || !d.Healthy {
					t.Errorf("device %d = %+v", i, d)
				}
			}
			again, err := src.Devices(t.Context())
			if err != nil || !slices.EqualFunc(first, again, api.Device.Equal) {
				t.Errorf("second read differs: %v", err)
			}
		})
	}
}

func TestOpenFakeUnknown(t *testing.T) {
	if _, err := OpenFake(t.Context(), nil, "dgx-nope"); !errors.Is(err, ErrUnknownFake) {
		t.Fatalf("err = %v, want ErrUnknownFake", err)
	}
}
