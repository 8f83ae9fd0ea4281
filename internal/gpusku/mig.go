package gpusku

import (
	"errors"
	"fmt"
	"strings"
)

// MIGProfile is one GPU instance profile of a MIG-capable model, as
// NVIDIA's MIG user guide lists it: Slices of the GPU's compute slices,
// MemorySlices of its memory slices, at most Max on one GPU.
type MIGProfile struct {
	Name         string
	Slices       int
	MemorySlices int
	Max          int
}

// migModel is the MIG geometry of one model: its slices and profiles.
type migModel struct {
	slices, memorySlices int
	profiles             []MIGProfile
}

// sevenSlices is the profile set of the seven-slice parts (A100, H100,
// H200, B200), named by the memory of one and two memory slices and of
// the whole GPU.
func sevenSlices(one, two, four, all int) migModel {
	g := func(slices, mem int) string { return fmt.Sprintf("%dg.%dgb", slices, mem) }
	return migModel{7, 8, []MIGProfile{
		{g(1, one), 1, 1, 7},
		{g(1, one) + "+me", 1, 1, 1},
		{g(1, two), 1, 2, 4},
		{g(2, two), 2, 2, 3},
		{g(3, four), 3, 4, 2},
		{g(4, four), 4, 4, 1},
		{g(7, all), 7, 8, 1},
	}}
}

// migModels are the MIG-capable models known, by the name NVML reports.
var migModels = map[string]migModel{
	"NVIDIA A100-PCIE-40GB":   sevenSlices(5, 10, 20, 40),
	"NVIDIA A100-SXM4-40GB":   sevenSlices(5, 10, 20, 40),
	"NVIDIA A100-PCIE-80GB":   sevenSlices(10, 20, 40, 80),
	"NVIDIA A100-SXM4-80GB":   sevenSlices(10, 20, 40, 80),
	"NVIDIA H100 80GB HBM3":   sevenSlices(10, 20, 40, 80),
	"NVIDIA H100 PCIe":        sevenSlices(10, 20, 40, 80),
	"NVIDIA H200 141GB HBM3e": sevenSlices(18, 35, 71, 141),
	"NVIDIA B200 180GB HBM3e": sevenSlices(23, 45, 90, 180),
	"NVIDIA A30-PCIE-24GB": {4, 4, []MIGProfile{
		{"1g.6gb", 1, 1, 4}, {"1g.6gb+me", 1, 1, 1}, {"2g.12gb", 2, 2, 2}, {"2g.12gb+me", 2, 2, 1}, {"4g.24gb", 4, 4, 1},
	}},
}

var (
	// ErrNoMIG is a model without MIG, or one whose profiles are not known.
	ErrNoMIG = errors.New("no MIG profiles known for this model")
	// ErrMIGLayout is a layout the model cannot take.
	ErrMIGLayout = errors.New("MIG layout not possible")
)

// MIGProfiles lists the MIG profiles of a model NVML names name.
func MIGProfiles(name string) ([]MIGProfile, error) {
	m, ok := lookupMIG(name)
	if !ok {
		return nil, fmt.Errorf("%q: %w", strings.TrimSpace(name), ErrNoMIG)
	}
	return append([]MIGProfile(nil), m.profiles...), nil
}

func lookupMIG(name string) (migModel, bool) {
	for k, m := range migModels {
		if strings.EqualFold(k, strings.TrimSpace(name)) {
			return m, true
		}
	}
	return migModel{}, false
}

// CheckMIGLayout checks that a GPU of model name can be split into the
// MIG devices of layout (profile names; none is the GPU whole): each
// profile is one of the model's, none more often than the model allows,
// and together they fit in its compute and memory slices. Where on the
// GPU each goes (NVML's placements) is the agent's to find; a layout that
// passes here can still fail there on a model whose placements are
// stricter than the slice counts (a 4g and a 3g fit an A100, two 4g do
// not: the count rule catches that one).
func CheckMIGLayout(name string, layout []string) error {
	m, ok := lookupMIG(name)
	if !ok {
		return fmt.Errorf("%q: %w", strings.TrimSpace(name), ErrNoMIG)
	}
	count := map[string]int{}
	slices, mem := 0, 0
	for _, p := range layout {
		prof, ok := m.profile(p)
		if !ok {
			return fmt.Errorf("%w: a %s has no profile %q (it has %s)", ErrMIGLayout, strings.TrimSpace(name), p, m.names())
		}
		count[p]++
		if count[p] > prof.Max {
			return fmt.Errorf("%w: a %s takes at most %d of %s", ErrMIGLayout, strings.TrimSpace(name), prof.Max, p)
		}
		slices += prof.Slices
		mem += prof.MemorySlices
	}
	if slices > m.slices || mem > m.memorySlices {
		return fmt.Errorf("%w: %s needs %d compute and %d memory slices, a %s has %d and %d",
			ErrMIGLayout, strings.Join(layout, ","), slices, mem, strings.TrimSpace(name), m.slices, m.memorySlices)
	}
	return nil
}

func (m migModel) profile(name string) (MIGProfile, bool) {
	for _, p := range m.profiles {
		if p.Name == name {
			return p, true
		}
	}
	return MIGProfile{}, false
}

func (m migModel) names() string {
	names := make([]string, len(m.profiles))
	for i, p := range m.profiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// FillMIGLayout is the layout that splits a GPU of model name into as
// many MIG devices of profile as it takes, or an error when it takes none.
func FillMIGLayout(name, profile string) ([]string, error) {
	var layout []string
	for len(layout) < 8 && CheckMIGLayout(name, append(layout, profile)) == nil {
		layout = append(layout, profile)
	}
	if len(layout) == 0 {
		return nil, CheckMIGLayout(name, []string{profile})
	}
	return layout, nil
}
