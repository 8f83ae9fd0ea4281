//go:build cgo && linux

package nvml

import (
	"errors"
	"slices"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// layoutOf is GPU uuid's MIG mode and its MIG devices' profiles (sorted)
// and UUIDs as the source reads them.
func layoutOf(t *testing.T, src *Source, uuid string) (mig bool, profiles, uuids []string) {
	t.Helper()
	devs, err := src.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		switch {
		case d.UUID == uuid:
			mig = d.MIGEnabled
		case d.Parent == uuid:
			if !d.Healthy {
				t.Errorf("MIG device %s unhealthy: %+v", d.UUID, d)
			}
			profiles, uuids = append(profiles, d.MIGProfile), append(uuids, d.UUID)
		}
	}
	slices.Sort(profiles)
	return mig, profiles, uuids
}

// A GPU of go-nvml's A100 mock is split into MIG devices through NVML,
// re-split into another layout (new MIG devices, new UUIDs), and made
// whole again; the other GPUs stay whole throughout.
func TestRepartitionSplitsAndJoinsAGPU(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXA100, nvmltest.StableUUIDs())
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gpu := nvmltest.StableUUID(3)
	for _, layout := range [][]string{
		{"3g.20gb", "3g.20gb"},
		{"1g.5gb", "4g.20gb", "2g.10gb"},
		{"7g.40gb"},
		{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"},
		{"1g.5gb+me", "1g.10gb", "3g.20gb"},
	} {
		_, _, before := layoutOf(t, src, gpu)
		if err := src.Repartition(t.Context(), gpu, layout); err != nil {
			t.Fatalf("%v: %v", layout, err)
		}
		mig, got, uuids := layoutOf(t, src, gpu)
		if !mig || !slices.Equal(got, slices.Sorted(slices.Values(layout))) {
			t.Fatalf("after %v: MIG %v, profiles %v", layout, mig, got)
		}
		for _, u := range uuids {
			if slices.Contains(before, u) {
				t.Errorf("after %v: MIG device %s outlived the repartition", layout, u)
			}
		}
	}
	if err := src.Repartition(t.Context(), gpu, nil); err != nil {
		t.Fatal(err)
	}
	if mig, got, _ := layoutOf(t, src, gpu); mig || len(got) != 0 {
		t.Fatalf("made whole: MIG %v, MIG devices %v", mig, got)
	}
	devs, _ := src.Devices(t.Context())
	if n := slices.IndexFunc(devs, func(d api.Device) bool { return d.MIGEnabled || d.Parent != "" }); n >= 0 {
		t.Fatalf("a GPU left in MIG mode: %+v", devs[n])
	}
}

// A layout the GPU cannot take is refused before anything changes: the
// GPU keeps its MIG devices. An NVML step that fails once the repartition
// has begun is reported as such.
func TestRepartitionRefusals(t *testing.T) {
	m := nvmltest.New(nvmltest.DGXA100, nvmltest.StableUUIDs())
	src, err := OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	gpu := nvmltest.StableUUID(0)
	if err := src.Repartition(t.Context(), gpu, []string{"4g.20gb", "3g.20gb"}); err != nil {
		t.Fatal(err)
	}
	_, _, kept := layoutOf(t, src, gpu)
	for name, layout := range map[string][]string{
		"another model's profile": {"3g.40gb"},
		"three halves":            {"3g.20gb", "3g.20gb", "3g.20gb"},
		"two 4g":                  {"4g.20gb", "4g.20gb"},
		"eight slices":            {"7g.40gb", "1g.5gb"},
	} {
		if err := src.Repartition(t.Context(), gpu, layout); !errors.Is(err, ErrMIGLayout) {
			t.Errorf("%s: %v, want ErrMIGLayout", name, err)
		}
		if _, _, now := layoutOf(t, src, gpu); !slices.Equal(now, kept) {
			t.Errorf("%s: the GPU changed: %v, was %v", name, now, kept)
		}
	}
	if err := src.Repartition(t.Context(), "GPU-nope", []string{"7g.40gb"}); !errors.Is(err, ErrRepartition) {
		t.Errorf("an unknown GPU: %v", err)
	}
	m.Fail(0, "CreateComputeInstance", gonvml.ERROR_INSUFFICIENT_RESOURCES, nvmltest.Once)
	err = src.Repartition(t.Context(), gpu, []string{"7g.40gb"})
	if !errors.Is(err, ErrRepartition) {
		t.Fatalf("a failed step: %v", err)
	}
	if err := src.Repartition(t.Context(), gpu, []string{"7g.40gb"}); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if _, got, _ := layoutOf(t, src, gpu); !slices.Equal(got, []string{"7g.40gb"}) {
		t.Fatalf("after the retry: %v", got)
	}
	src.Close()
	if err := src.Repartition(t.Context(), gpu, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// A bare fake set cannot be repartitioned.
func TestRepartitionNeedsNVML(t *testing.T) {
	src, err := OpenFake(t.Context(), nil, FakeDGXA100)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	devs, _ := src.Devices(t.Context())
	if err := src.Repartition(t.Context(), devs[0].UUID, []string{"7g.40gb"}); !errors.Is(err, ErrNoRepartition) {
		t.Fatalf("%v, want ErrNoRepartition", err)
	}
}
