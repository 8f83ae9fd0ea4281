package fit

import (
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

func h100(uuid string) command.Device {
	return command.Device{UUID: uuid, Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", MemoryMiB: 81559, Healthy: true}
}

func TestDeviceFits(t *testing.T) {
	mig := h100("MIG-1")
	mig.Parent, mig.MIGProfile, mig.MemoryMiB = "GPU-1", "1g.10gb", 9728
	inMIG := h100("GPU-1")
	inMIG.MIGEnabled = true
	for _, c := range []struct {
		name string
		d    command.Device
		r    command.Resources
		want bool
	}{
		{"a whole GPU, no terms", h100("g"), command.Resources{GPUs: 1}, true},
		{"memory enough", h100("g"), command.Resources{GPUs: 1, GPUMemoryMiB: 81559}, true},
		{"memory short", h100("g"), command.Resources{GPUs: 1, GPUMemoryMiB: 81560}, false},
		{"model, any case", h100("g"), command.Resources{GPUs: 1, GPUModel: "h100"}, true},
		{"another model", h100("g"), command.Resources{GPUs: 1, GPUModel: "A100"}, false},
		{"capability floor met", h100("g"), command.Resources{GPUs: 1, ComputeCapability: "8.0"}, true},
		{"capability floor above", h100("g"), command.Resources{GPUs: 1, ComputeCapability: "10.0"}, false},
		{"a GPU in MIG mode, never whole", inMIG, command.Resources{GPUs: 1}, false},
		{"a MIG device for its profile", mig, command.Resources{GPUs: 1, MIGProfile: "1g.10gb"}, true},
		{"a MIG device for no profile", mig, command.Resources{GPUs: 1}, false},
		{"a whole GPU for a profile", h100("g"), command.Resources{GPUs: 1, MIGProfile: "1g.10gb"}, false},
	} {
		if got := DeviceFits(c.d, &c.r); got != c.want {
			t.Errorf("%s: fits %v, want %v", c.name, got, c.want)
		}
	}
}

func TestShareFits(t *testing.T) {
	mps := h100("g")
	mps.Sharing = "mps"
	share := func(mib uint64, enforced bool) *command.Resources {
		r := &command.Resources{GPUs: 1, GPUMemoryMiB: mib, GPUSharing: "shared"}
		if enforced {
			r.GPUSharing = command.SharingEnforced
		}
		return r
	}
	for _, c := range []struct {
		name string
		d    command.Device
		r    *command.Resources
		used uint64
		want bool
	}{
		{"room left", h100("g"), share(40000, false), 40000, true},
		{"exactly full", h100("g"), share(41559, false), 40000, true},
		{"no room", h100("g"), share(41560, false), 40000, false},
		{"enforced on a GPU without MPS", h100("g"), share(1000, true), 0, false},
		{"enforced on an MPS GPU", mps, share(1000, true), 0, true},
	} {
		if got := ShareFits(c.d, c.r, c.used); got != c.want {
			t.Errorf("%s: fits %v, want %v", c.name, got, c.want)
		}
	}
}

func TestOffered(t *testing.T) {
	gpu, mig := h100("GPU-1"), h100("MIG-1")
	mig.Parent = "GPU-1"
	approved := func() *record.Worker {
		return &record.Worker{
			Devices:          []command.Device{gpu, mig},
			ApprovedDevices:  Inventory([]command.Device{gpu, mig}),
			ApprovedIdentity: Identities([]command.Device{gpu, mig}),
		}
	}
	for _, c := range []struct {
		name   string
		change func(w *record.Worker, d *command.Device)
		want   bool
	}{
		{"approved and healthy", func(*record.Worker, *command.Device) {}, true},
		{"unhealthy", func(_ *record.Worker, d *command.Device) { d.Healthy = false }, false},
		{"approved before approvals were kept", func(w *record.Worker, _ *command.Device) { w.ApprovedDevices, w.ApprovedIdentity = nil, nil }, true},
		{"not in the approved inventory", func(w *record.Worker, _ *command.Device) { delete(w.ApprovedDevices, "MIG-1") }, false},
		{"reports another size", func(_ *record.Worker, d *command.Device) { d.MemoryMiB++ }, false},
		{"reports another model", func(_ *record.Worker, d *command.Device) { d.Name = "NVIDIA A100" }, false},
		{"a driver upgrade needs no approval", func(_ *record.Worker, d *command.Device) { d.DriverVersion = "999.1" }, true},
		{"its GPU cordoned", func(w *record.Worker, _ *command.Device) { w.Cordons = map[string]string{"GPU-1": "suspect"} }, false},
		{"another GPU cordoned", func(w *record.Worker, _ *command.Device) { w.Cordons = map[string]string{"GPU-9": "suspect"} }, true},
		{"its GPU awaits a MIG layout", func(w *record.Worker, _ *command.Device) {
			w.MIGLayouts = []record.MIGLayout{{UUID: "GPU-1", State: record.MIGPending}}
		}, false},
		{"its GPU's layout failed", func(w *record.Worker, _ *command.Device) {
			w.MIGLayouts = []record.MIGLayout{{UUID: "GPU-1", State: record.MIGFailed}}
		}, false},
		{"its GPU's layout applied", func(w *record.Worker, _ *command.Device) {
			w.MIGLayouts = []record.MIGLayout{{UUID: "GPU-1", State: record.MIGApplied}}
		}, true},
	} {
		w, d := approved(), mig
		c.change(w, &d)
		if got := Offered(w, d); got != c.want {
			t.Errorf("%s: offered %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	for _, c := range []struct {
		worker       []string
		narrow, want string
		allows       bool
	}{
		{[]string{"*"}, "", "train", true},
		{nil, "", "", false},
		{[]string{"train"}, "", "", true},
		{[]string{"train"}, "", "infer", false},
		{[]string{"train", "infer"}, "infer", "infer", true},
		{[]string{"train", "infer"}, "infer", "", false}, // the narrowing asks for infer only
		{[]string{"train"}, "infer", "infer", false},
		{[]string{"*"}, "infer", "infer", true},
	} {
		if got := CapabilityAllows(c.worker, c.narrow, c.want); got != c.allows {
			t.Errorf("worker %v, narrowed to %q, task wants %q: allows %v, want %v", c.worker, c.narrow, c.want, got, c.allows)
		}
	}
	for _, c := range []struct {
		worker []string
		narrow string
		caps   []string
		any    bool
	}{
		{nil, "", nil, false},
		{[]string{"*"}, "", nil, true},
		{[]string{"*"}, "infer", []string{"infer"}, false},
		{[]string{"train", "infer", "train"}, "", []string{"", "infer", "train"}, false},
		{[]string{"train"}, "infer", nil, false},
	} {
		caps, anyCap := AcceptedCapabilities(c.worker, c.narrow)
		if !slices.Equal(caps, c.caps) || anyCap != c.any {
			t.Errorf("worker %v narrowed to %q: %v %v, want %v %v", c.worker, c.narrow, caps, anyCap, c.caps, c.any)
		}
	}
}

func TestHealthyFirst(t *testing.T) {
	devs := []command.Device{h100("a"), h100("b"), h100("c"), h100("d")}
	devs[0].Health, devs[2].Health = HealthDegraded, HealthDegraded
	uuids := func(ds []command.Device) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.UUID)
		}
		return out
	}
	if got := uuids(HealthyFirst(devs, 2)); !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("two wanted, two healthy: %v, want the healthy ones only", got)
	}
	if got := uuids(HealthyFirst(devs, 3)); !slices.Equal(got, []string{"b", "d", "a", "c"}) {
		t.Errorf("three wanted: %v, want the healthy first, the degraded after in order", got)
	}
}

// Compute capabilities compare as numbers: a 10.0 GPU meets a 9.0 floor
// and a 9.0 GPU does not meet a 10.0 one.
func TestCompareCapabilityAsNumbers(t *testing.T) {
	for _, c := range []struct {
		have, want string
		fits       bool
	}{
		{"10.0", "9.0", true}, {"9.0", "10.0", false}, {"9.0", "9.0", true},
		{"8.6", "8.0", true}, {"8.0", "8.6", false}, {"12.1", "10.0", true},
	} {
		if got := compareCapability(c.have, c.want) >= 0; got != c.fits {
			t.Errorf("a %s GPU for a %s floor: fits %v, want %v", c.have, c.want, got, c.fits)
		}
	}
}

func TestCenti(t *testing.T) {
	spec := func(gpus, count int, gang bool, r command.Resources) command.JobSpec {
		r.GPUs = gpus
		return command.JobSpec{Count: count, Gang: gang, Resources: &r}
	}
	for _, c := range []struct {
		name        string
		spec        command.JobSpec
		most, whole int64
	}{
		{"no GPUs", command.JobSpec{}, 0, 0},
		{"two whole GPUs", spec(2, 3, false, command.Resources{}), 200, 200},
		{"a gang of three of two", spec(2, 3, true, command.Resources{}), 600, 600},
		{"a MIG device", spec(1, 1, false, command.Resources{MIGProfile: "1g.10gb"}), 100, 1},
		{"a share", spec(1, 1, false, command.Resources{GPUMemoryMiB: 1000, GPUSharing: "shared"}), 100, 1},
	} {
		if most, whole := MostCenti(c.spec), WholeCenti(c.spec); most != c.most || whole != c.whole {
			t.Errorf("%s: most %d, whole %d; want %d, %d", c.name, most, whole, c.most, c.whole)
		}
	}
}

func TestTaskCentiAndMeter(t *testing.T) {
	gpu := h100("GPU-1")
	mig := h100("MIG-1")
	mig.Parent, mig.MemoryMiB, mig.Name = "GPU-1", 20390, "MIG 2g.20gb"
	a100 := command.Device{UUID: "GPU-2", Name: "NVIDIA A100", MemoryMiB: 40960, Healthy: true}
	w := &record.Worker{Devices: []command.Device{gpu, mig, a100}}
	whole := &command.Resources{GPUs: 1}
	for _, c := range []struct {
		name  string
		devs  []string
		r     *command.Resources
		centi int64
	}{
		{"a whole GPU", []string{"GPU-1"}, whole, 100},
		{"two whole GPUs", []string{"GPU-1", "GPU-2"}, whole, 200},
		{"a MIG device: its memory's fraction, rounded up", []string{"MIG-1"}, &command.Resources{GPUs: 1, MIGProfile: "2g.20gb"}, 26},
		{"a share: its memory's fraction", []string{"GPU-2"}, &command.Resources{GPUs: 1, GPUMemoryMiB: 10240, GPUSharing: "shared"}, 25},
		{"a device gone from the report counts whole", []string{"GPU-gone"}, whole, 100},
	} {
		if got := TaskCenti(w, c.devs, c.r); got != c.centi {
			t.Errorf("%s: %d, want %d", c.name, got, c.centi)
		}
	}
	got := Meter(w, []string{"GPU-1", "MIG-1", "GPU-2"}, whole)
	want := []record.MeterShare{{Model: gpu.Name, Centi: 126}, {Model: "NVIDIA A100", Centi: 100}}
	if !slices.Equal(got, want) {
		t.Errorf("meter %v, want %v (a MIG device counts for its parent's model)", got, want)
	}
}
