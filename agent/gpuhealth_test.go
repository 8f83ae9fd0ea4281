package agent

import (
	"log/slog"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpulayer/gpulayer/agent/devices/health"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Tasks on MIG devices are given the MIG devices' UUIDs, never their
// GPU's: a fault of the GPU must reach them, and a fault that names one
// MIG device must reach that device alone.
func TestGPUFaultsReachTheirMIGDevices(t *testing.T) {
	a := &Agent{devices: []api.Device{
		{UUID: "GPU-1"},
		{UUID: "MIG-1a", Parent: "GPU-1"},
		{UUID: "MIG-1b", Parent: "GPU-1"},
		{UUID: "GPU-2"},
		{UUID: "MIG-2a", Parent: "GPU-2"},
	}}
	cases := []struct {
		name      string
		fail, got []string
	}{
		{"a GPU in MIG mode and its devices", []string{"GPU-1"}, []string{"GPU-1", "MIG-1a", "MIG-1b"}},
		{"one MIG device alone", []string{"MIG-2a"}, []string{"MIG-2a"}},
		{"nothing", nil, nil},
	}
	for _, c := range cases {
		if got := a.withMIGDevices(c.fail); !slices.Equal(got, c.got) {
			t.Errorf("%s: %v, want %v", c.name, got, c.got)
		}
	}
}

// fakeFailer records how the health loop asked the runner to stop tasks.
type fakeFailer struct{ calls []string }

func (f *fakeFailer) FailGPU(uuid, _ string) []string {
	f.calls = append(f.calls, "gpu "+uuid)
	return nil
}

func (f *fakeFailer) FailApp(uuid, _ string) ([]string, []string) {
	f.calls = append(f.calls, "app "+uuid)
	return nil, nil
}

// An application XID reaches the runner as an application's fault (the
// tasks sharing the GPU are spared, runner.FailApp); a GPU's fault as the
// GPU's, every task on it stopped.
func TestApplicationFaultsSpareSharedTasks(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	cases := []struct {
		xid  uint64
		want []string
	}{
		{13, []string{"app GPU-1"}},
		{43, []string{"app GPU-1"}},
		{79, []string{"gpu GPU-1"}},
		{48, []string{"gpu GPU-1"}},
	}
	for _, c := range cases {
		tr := health.New(health.Policy{}, t0, "boot", []string{"GPU-1"}, nil)
		tr.Observe(t0, health.Observation{UUID: "GPU-1", Kind: health.Watched})
		eff := tr.Observe(t0.Add(time.Second), health.Observation{UUID: "GPU-1", Kind: health.XidError, Xid: c.xid})
		a := &Agent{devices: []api.Device{{UUID: "GPU-1"}}, log: slog.New(slog.DiscardHandler)}
		f := &fakeFailer{}
		a.failTasks(f, eff)
		if !slices.Equal(f.calls, c.want) {
			t.Errorf("XID %d: runner asked %v, want %v", c.xid, f.calls, c.want)
		}
	}
}

// A health reason longer than the contract allows is cut, at a
// character, so that the report that carries it is not refused.
func TestClipReason(t *testing.T) {
	cases := []struct {
		why  string
		max  int
		want string
	}{
		{"short", 16, "short"},
		{"exactly16bytes!!", 16, "exactly16bytes!!"},
		{"throttle: clocks held down", 16, "throttle: clo…"},
		{"busy at 95% — with no process", 16, "busy at 95% …"},
	}
	for _, c := range cases {
		got := clipReason(c.why, c.max)
		if got != c.want || len(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("clipReason(%q, %d) = %q (%d bytes), want %q", c.why, c.max, got, len(got), c.want)
		}
	}
}
