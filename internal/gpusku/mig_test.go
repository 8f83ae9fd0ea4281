package gpusku

import (
	"errors"
	"testing"
)

func TestCheckMIGLayout(t *testing.T) {
	for _, c := range []struct {
		model  string
		layout []string
		want   error
	}{
		{"NVIDIA A100-SXM4-80GB", []string{"3g.40gb", "3g.40gb"}, nil},
		{"NVIDIA A100-SXM4-80GB", nil, nil},
		{"NVIDIA A100-SXM4-40GB", []string{"4g.20gb", "2g.10gb", "1g.5gb"}, nil},
		{"NVIDIA A100-SXM4-40GB", []string{"1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb", "1g.5gb"}, nil},
		{"NVIDIA A100-SXM4-40GB", []string{"3g.40gb"}, ErrMIGLayout},                       // an 80 GB profile
		{"NVIDIA A100-SXM4-80GB", []string{"4g.40gb", "4g.40gb"}, ErrMIGLayout},            // at most one 4g
		{"NVIDIA A100-SXM4-80GB", []string{"3g.40gb", "3g.40gb", "1g.10gb"}, ErrMIGLayout}, // 9 memory slices
		{"NVIDIA H100 80GB HBM3", []string{"7g.80gb", "1g.10gb"}, ErrMIGLayout},
		{"NVIDIA A30-PCIE-24GB", []string{"2g.12gb", "2g.12gb"}, nil},
		{"NVIDIA A30-PCIE-24GB", []string{"4g.24gb", "1g.6gb"}, ErrMIGLayout},
		{"NVIDIA L4", []string{"1g.5gb"}, ErrNoMIG},
		{"Tesla V100-SXM2-16GB", nil, ErrNoMIG},
	} {
		err := CheckMIGLayout(c.model, c.layout)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s %v: %v, want %v", c.model, c.layout, err, c.want)
		}
	}
}

func TestMIGProfilesAreTheModels(t *testing.T) {
	ps, err := MIGProfiles("nvidia h100 80gb hbm3")
	if err != nil || len(ps) != 7 || ps[4].Name != "3g.40gb" || ps[6].Name != "7g.80gb" {
		t.Fatalf("%v %v", ps, err)
	}
	if _, err := MIGProfiles("NVIDIA T4"); !errors.Is(err, ErrNoMIG) {
		t.Fatalf("T4: %v", err)
	}
}

func TestFillMIGLayout(t *testing.T) {
	for _, c := range []struct {
		model, profile string
		want           int
	}{
		{"NVIDIA A100-SXM4-80GB", "3g.40gb", 2},
		{"NVIDIA A100-SXM4-80GB", "1g.10gb", 7},
		{"NVIDIA A100-SXM4-80GB", "2g.20gb", 3},
		{"NVIDIA A100-SXM4-80GB", "1g.20gb", 4},
		{"NVIDIA H100 80GB HBM3", "7g.80gb", 1},
		{"NVIDIA A30-PCIE-24GB", "2g.12gb", 2},
	} {
		got, err := FillMIGLayout(c.model, c.profile)
		if err != nil || len(got) != c.want {
			t.Errorf("%s %s: %v %v, want %d", c.model, c.profile, got, err, c.want)
		}
	}
	if _, err := FillMIGLayout("NVIDIA A100-SXM4-40GB", "3g.40gb"); !errors.Is(err, ErrMIGLayout) {
		t.Errorf("a profile of another model: %v", err)
	}
	if _, err := FillMIGLayout("NVIDIA L4", "1g.5gb"); !errors.Is(err, ErrNoMIG) {
		t.Errorf("a model without MIG: %v", err)
	}
}
