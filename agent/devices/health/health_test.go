package health

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

const gpu = "GPU-0"

// step is one thing that happens to the tracker in a scenario.
type step struct {
	after time.Duration // since t0
	obs   *Observation  // nil: a Tick
	want  State
	fails bool // the effect fails the tasks on the GPU
}

func obs(k Kind, xid uint64) *Observation { return &Observation{UUID: gpu, Kind: k, Xid: xid} }

func TestTransitions(t *testing.T) {
	hold := 10 * time.Minute
	cases := []struct {
		name  string
		steps []step
	}{
		{"unknown until watched, then healthy", []step{
			{0, nil, Unknown, false},
			{time.Second, obs(Watched, 0), Healthy, false},
		}},
		{"blind from the start stays unknown", []step{
			{0, obs(Blind, 0), Unknown, false},
			{hold * 2, nil, Unknown, false},
		}},
		{"an application XID fails the task, the GPU stays healthy", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(XidError, 13), Healthy, true},
			{time.Second, obs(XidError, 31), Healthy, true},
		}},
		{"a reset-class XID takes the GPU out until the driver says it is repaired, then hold-down", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(XidError, 48), Unhealthy, true},
			{hold * 3, nil, Unhealthy, false}, // time alone repairs nothing
			{hold * 3, obs(NoRecoveryPending, 0), Recovering, false},
			{hold*4 - time.Second, nil, Recovering, false},
			{hold * 4, nil, Healthy, false},
		}},
		{"a fault during the hold-down starts over", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(DoubleBitECC, 0), Unhealthy, true},
			{time.Minute, obs(NoRecoveryPending, 0), Recovering, false},
			{2 * time.Minute, obs(XidError, 95), Unhealthy, true},
			{hold * 2, nil, Unhealthy, false},
		}},
		{"a lost GPU is not repaired by the driver's word", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(Lost, 0), Unhealthy, true},
			{time.Minute, obs(NoRecoveryPending, 0), Unhealthy, false},
		}},
		{"an unknown XID fails closed", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(XidError, 9999), Unhealthy, true},
		}},
		{"losing sight of a healthy GPU makes it unknown; regaining it goes through hold-down", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Second, obs(Blind, 0), Unknown, false},
			{time.Minute, obs(Watched, 0), Recovering, false},
			{time.Minute + hold, nil, Healthy, false},
		}},
		{"flapping quarantines: no repair brings it back", []step{
			{0, obs(Watched, 0), Healthy, false},
			{time.Minute, obs(XidError, 48), Unhealthy, true},
			{2 * time.Minute, obs(NoRecoveryPending, 0), Recovering, false},
			{3 * time.Minute, obs(XidError, 48), Unhealthy, true},
			{4 * time.Minute, obs(NoRecoveryPending, 0), Recovering, false},
			{5 * time.Minute, obs(XidError, 48), Unhealthy, true},
			{6 * time.Minute, obs(NoRecoveryPending, 0), Unhealthy, false},
			{6*time.Minute + 2*hold, nil, Unhealthy, false},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runSteps(t, New(Policy{HoldDown: hold}, t0, "boot-a", []string{gpu}, nil), c.steps)
		})
	}
}

// runSteps applies steps to tr, checking the state and effect after each
// (and that a GPU not offered is, and one not healthy says why), and
// returns the last status.
func runSteps(t *testing.T, tr *Tracker, steps []step) Status {
	t.Helper()
	var st Status
	for i, s := range steps {
		now := t0.Add(s.after)
		var eff Effect
		if s.obs != nil {
			eff = tr.Observe(now, *s.obs)
		} else {
			tr.Tick(now)
		}
		st = tr.Status(gpu)
		if st.State != s.want || (len(eff.FailTasks) > 0) != s.fails {
			t.Fatalf("step %d: state %s (%s), fails tasks %v; want %s, fails %v", i, st.State, st.Reason(), eff.FailTasks, s.want, s.fails)
		}
		if s.want != Healthy && st.Reason() == "" {
			t.Fatalf("step %d: %s without a reason", i, st.State)
		}
		if st.State.Offered() != (s.want == Healthy || s.want == Degraded) {
			t.Fatalf("step %d: %s offered %v", i, st.State, st.State.Offered())
		}
	}
	return st
}

// A restart of the agent does not whitewash a fault; a reboot of the node
// repairs one that a reboot repairs, through the hold-down; a quarantine
// survives both.
func TestSavedStatusesAcrossRestartsAndReboots(t *testing.T) {
	hold := 10 * time.Minute
	cases := []struct {
		name       string
		xid        uint64
		quarantine bool
		boot       string
		want       State
	}{
		{"agent restart keeps a reset fault", 48, false, "boot-a", Unhealthy},
		{"agent restart keeps a lost GPU", 79, false, "boot-a", Unhealthy},
		{"a reboot repairs a reset fault, then hold-down", 48, false, "boot-b", Recovering},
		{"a reboot repairs a lost GPU, then hold-down", 79, false, "boot-b", Recovering},
		{"an unknown boot repairs nothing", 48, false, "", Unhealthy},
		{"a reboot does not lift a quarantine", 48, true, "boot-b", Unhealthy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := New(Policy{HoldDown: hold, FlapFaults: 2}, t0, "boot-a", []string{gpu}, nil)
			first.Observe(t0, *obs(Watched, 0))
			first.Observe(t0, *obs(XidError, c.xid))
			if c.quarantine {
				first.Observe(t0, *obs(XidError, c.xid))
			}
			dir := t.TempDir()
			if err := Save(dir, first.Statuses()); err != nil {
				t.Fatal(err)
			}
			saved, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			later := t0.Add(time.Hour)
			second := New(Policy{HoldDown: hold, FlapFaults: 2}, later, c.boot, []string{gpu, "GPU-new"}, saved)
			if got := second.Status(gpu).State; got != c.want {
				t.Fatalf("after restart: %s (%s), want %s", got, second.Status(gpu).Reason(), c.want)
			}
			if got := second.Status("GPU-new").State; got != Unknown {
				t.Fatalf("a GPU with no saved status starts %s, want unknown until watched", got)
			}
			second.Tick(later.Add(hold))
			if c.want == Recovering && second.Status(gpu).State != Healthy {
				t.Fatalf("after the hold-down: %s", second.Status(gpu).State)
			}
		})
	}
}

func TestClassifyFollowsTheCatalogAndOverrides(t *testing.T) {
	cases := []struct {
		xid       uint64
		overrides map[uint64]Class
		want      Class
	}{
		{13, nil, ClassApplication},
		{31, nil, ClassApplication},
		{48, nil, ClassResetGPU},
		{79, nil, ClassGPULost},
		{143, nil, ClassRebootNode},
		{12345, nil, ClassResetGPU},
		{13, map[uint64]Class{13: ClassResetGPU}, ClassResetGPU},
		{48, map[uint64]Class{48: ClassApplication}, ClassApplication},
	}
	for _, c := range cases {
		if got := Classify(c.xid, c.overrides); got != c.want {
			t.Errorf("Classify(%d, %v) = %s, want %s", c.xid, c.overrides, got, c.want)
		}
	}
}

func TestClearLiftsAQuarantineThroughTheHoldDown(t *testing.T) {
	tr := New(Policy{FlapFaults: 1}, t0, "b", []string{gpu}, nil)
	tr.Observe(t0, *obs(Watched, 0))
	tr.Observe(t0, *obs(XidError, 48))
	if st := tr.Status(gpu); !st.Quarantined || !strings.Contains(st.Reason(), "quarantined") {
		t.Fatalf("not quarantined: %+v", st)
	}
	if !tr.Clear(t0.Add(time.Minute), gpu) || tr.Status(gpu).State != Recovering {
		t.Fatalf("clear: %+v", tr.Status(gpu))
	}
	if tr.Tick(t0.Add(time.Hour)); tr.Status(gpu).State != Healthy {
		t.Fatalf("after the hold-down: %+v", tr.Status(gpu))
	}
	if ids := statusIDs(tr.Statuses()); !slices.Equal(ids, []string{gpu}) {
		t.Fatalf("statuses %v", ids)
	}
}

func statusIDs(ss []Status) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.UUID)
	}
	return out
}

// In MIG mode an application fault names its instance: only the tasks on
// that MIG device fail, and the GPU stays in service. A fault of the GPU
// itself names the GPU, whatever instance the event came from.
func TestMIGInstanceFaults(t *testing.T) {
	const mig = "MIG-2"
	cases := []struct {
		name     string
		xid      uint64
		want     State
		failWhat string
	}{
		{"an application XID in one instance fails that instance's tasks", 13, Healthy, mig},
		{"a reset-class XID from an instance takes the whole GPU out", 48, Unhealthy, gpu},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := New(Policy{}, t0, "boot", []string{gpu}, nil)
			tr.Observe(t0, Observation{UUID: gpu, Kind: Watched})
			eff := tr.Observe(t0.Add(time.Second), Observation{UUID: gpu, Kind: XidError, Xid: c.xid, Instance: mig})
			if !slices.Equal(eff.FailTasks, []string{c.failWhat}) || !strings.Contains(eff.Reason, "XID") {
				t.Errorf("effect = %+v, want the tasks on %s failed", eff, c.failWhat)
			}
			if eff.Application != (c.failWhat == mig) {
				t.Errorf("effect = %+v: an application's fault is %v", eff, c.failWhat == mig)
			}
			if c.failWhat == mig && !strings.Contains(eff.Reason, "MIG device "+mig+" of GPU "+gpu) {
				t.Errorf("reason %q does not name the instance and its GPU", eff.Reason)
			}
			if st := tr.Status(gpu); st.State != c.want {
				t.Errorf("GPU is %s, want %s", st.State, c.want)
			}
		})
	}
}
