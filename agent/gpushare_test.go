package agent

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// fakeShares is a runner's shares, recording the attempts stopped.
type fakeShares struct {
	shares  []runner.Share
	stopped []string
	reasons []string
}

func (f *fakeShares) Shares() []runner.Share { return f.shares }

func (f *fakeShares) StopOverShare(attemptID, reason string) bool {
	for _, s := range f.shares {
		if s.AttemptID == attemptID {
			f.stopped = append(f.stopped, attemptID)
			f.reasons = append(f.reasons, reason)
			return true
		}
	}
	return false
}

// pidInfo is what a fake process says of itself: the attempt its
// environment names, and its uid.
type pidInfo struct {
	attempt string
	uid     uint32
}

// pidTable is a fake process table.
type pidTable map[uint32]pidInfo

func (p pidTable) attemptOf(pid uint32) (string, uint32, bool) {
	e, ok := p[pid]
	return e.attempt, e.uid, ok
}

func proc(pid uint32, mib uint64) nvml.Process {
	return nvml.Process{PID: pid, UsedMiB: mib, UsedKnown: true}
}

// The watchdog stops an attempt whose processes on its GPU use more than
// its share plus the tolerance, and only that one; a GPU whose processes
// could not be read stops nothing and is logged once.
func TestShareWatchdogStopsOnlyTasksOverTheirShare(t *testing.T) {
	shares := []runner.Share{
		{TaskID: "t-big", AttemptID: "a-big", GPU: "GPU-0", MiB: 40960, Mode: api.SharingUnenforced, UID: 61000, OwnUID: true},
		{TaskID: "t-small", AttemptID: "a-small", GPU: "GPU-0", MiB: 30720, Mode: api.SharingEnforced, UID: 61001, OwnUID: true},
	}
	procs := pidTable{
		100: {"a-big", 61000}, 101: {"a-big", 61000}, 200: {"a-small", 61001}, 300: {"someone-else", 61002},
		400: {"a-small", 61000}, // a process of t-big's uid that names t-small's attempt
	}
	cases := []struct {
		name     string
		samples  []nvml.Sample
		stopped  []string
		reason   string // of the first stopped
		warnings int
	}{
		{"both within their shares", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(100, 20000), proc(101, 20000), proc(200, 30720)}}}, nil, "", 0},
		{"within the tolerance", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(100, 40960+2048)}}}, nil, "", 0},
		{"two processes together over", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(100, 30000), proc(101, 15000), proc(200, 1000)}}},
			[]string{"a-big"}, "used 45000 MiB of GPU GPU-0, over its share of 40960 MiB (gpu_memory_mib)", 0},
		{"another process's memory is not counted", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(300, 70000), proc(999, 70000), proc(200, 100)}}}, nil, "", 0},
		{"a process under another task's uid naming an attempt is not counted for it", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(400, 70000), proc(200, 100)}}}, nil, "", 0},
		{"memory NVML cannot tell is not counted", []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{{PID: 200}}}}, nil, "", 0},
		{"processes unread", []nvml.Sample{{UUID: "GPU-0"}}, nil, "", 1},
		{"GPU not sampled", []nvml.Sample{{UUID: "GPU-1", ProcessesRead: true, Processes: []nvml.Process{proc(200, 70000)}}}, nil, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			holder := &fakeShares{shares: shares}
			w := &shareWatchdog{holder: holder, attemptOf: procs.attemptOf, log: slog.New(slog.NewTextHandler(&logs, nil)), blind: map[string]bool{}}
			for range 2 { // a second look at the same sample warns no more
				w.check(c.samples)
				holder.shares = slices.DeleteFunc(slices.Clone(holder.shares), func(s runner.Share) bool { return slices.Contains(holder.stopped, s.AttemptID) })
			}
			if !slices.Equal(holder.stopped, c.stopped) {
				t.Fatalf("stopped %v, want %v", holder.stopped, c.stopped)
			}
			if c.reason != "" && holder.reasons[0] != c.reason {
				t.Fatalf("reason %q, want %q", holder.reasons[0], c.reason)
			}
			if n := strings.Count(logs.String(), "cannot read the processes"); n != c.warnings {
				t.Fatalf("%d warnings about unread processes, want %d:\n%s", n, c.warnings, logs.String())
			}
		})
	}
}

// The tolerance is 5% of the share, at least 64 MiB.
func TestShareTolerance(t *testing.T) {
	for share, want := range map[uint64]uint64{512: 64, 1280: 64, 4096: 204, 40960: 2048} {
		if got := shareTolerance(share); got != want {
			t.Errorf("shareTolerance(%d) = %d, want %d", share, got, want)
		}
	}
}

// MPS is detected by its control pipe in the pipe directory; it marks
// whole GPUs only, never a GPU in MIG mode or a MIG device.
func TestMPSMarksWholeGPUs(t *testing.T) {
	dir := t.TempDir()
	if mpsServes(dir) || mpsServes("") {
		t.Fatal("MPS detected without its control pipe")
	}
	if err := os.WriteFile(filepath.Join(dir, "control"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !mpsServes(dir) {
		t.Fatal("MPS not detected by its control pipe")
	}
	devs := []api.Device{{UUID: "GPU-0"}, {UUID: "GPU-1", MIGEnabled: true}, {UUID: "MIG-1", Parent: "GPU-1", MIGProfile: "1g.10gb"}}
	markSharing(devs, api.DeviceSharingMPS)
	var got []string
	for _, d := range devs {
		got = append(got, d.UUID+"="+d.Sharing)
	}
	if want := []string{"GPU-0=mps", "GPU-1=", "MIG-1="}; !slices.Equal(got, want) {
		t.Fatalf("marked %v, want %v", got, want)
	}
}
