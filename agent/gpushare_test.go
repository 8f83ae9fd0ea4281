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
	foreign []string // those stopped for a GPU they were not given
}

func (f *fakeShares) Shares() []runner.Share { return f.shares }

// StopOnForeignGPU records the stop as StopOverShare does, and in foreign.
func (f *fakeShares) StopOnForeignGPU(attemptID, reason string) bool {
	ok := f.StopOverShare(attemptID, reason)
	if ok {
		f.foreign = append(f.foreign, attemptID)
	}
	return ok
}

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

// pidInfo is a fake process: the attempt its environment names ("" when
// it names none) and its uid.
type pidInfo struct {
	attempt string
	uid     uint32
}

// pidTable is a fake process table; it records the processes whose uids
// (looked) and environment (envLooked) were read.
type pidTable struct {
	procs     map[uint32]pidInfo
	looked    []uint32
	envLooked []uint32
}

func (p *pidTable) uidsOf(pid uint32) ([4]uint32, bool) {
	p.looked = append(p.looked, pid)
	e, ok := p.procs[pid]
	return [4]uint32{e.uid, e.uid, e.uid, e.uid}, ok
}

func (p *pidTable) attemptOf(pid uint32) (string, bool) {
	p.envLooked = append(p.envLooked, pid)
	e, ok := p.procs[pid]
	return e.attempt, ok && e.attempt != ""
}

func (p *pidTable) watchdog(holder shareHolder, log *slog.Logger) *shareWatchdog {
	return &shareWatchdog{holder: holder, uidsOf: p.uidsOf, attemptOf: p.attemptOf, log: log, blind: map[string]bool{}}
}

func proc(pid uint32, mib uint64) nvml.Process {
	return nvml.Process{PID: pid, UsedMiB: mib, UsedKnown: true}
}

func onGPU0(procs ...nvml.Process) []nvml.Sample {
	return []nvml.Sample{{UUID: "GPU-0", ProcessesRead: true, Processes: procs}}
}

// The watchdog stops an attempt whose processes on its GPU use more than
// its share plus the tolerance, and only that one; a GPU whose processes
// could not be read stops nothing and is logged once. Where each task has
// a uid of its own, a process is a task's by its uid alone: whatever its
// environment says, or does not.
func TestShareWatchdogStopsOnlyTasksOverTheirShare(t *testing.T) {
	ownUID := []runner.Share{
		{TaskID: "t-big", AttemptID: "a-big", GPU: "GPU-0", MiB: 40960, UID: 61000, OwnUID: true},
		{TaskID: "t-small", AttemptID: "a-small", GPU: "GPU-0", MiB: 30720, UID: 61001, OwnUID: true},
	}
	oneUser := []runner.Share{
		{TaskID: "t-big", AttemptID: "a-big", GPU: "GPU-0", MiB: 40960, UID: 1000},
		{TaskID: "t-small", AttemptID: "a-small", GPU: "GPU-0", MiB: 30720, UID: 1000},
	}
	procs := map[uint32]pidInfo{
		100: {"a-big", 61000}, 101: {"a-big", 61000}, 200: {"a-small", 61001}, 300: {"someone-else", 61002},
		102: {"", 61000},        // a process of t-big that cleared its environment
		400: {"a-small", 61000}, // a process of t-big that names t-small's attempt
		500: {"a-small", 61002}, // a process of no task's uid that names t-small's attempt
		600: {"a-big", 1000}, 601: {"a-small", 1000}, 602: {"", 1000},
	}
	cases := []struct {
		name     string
		shares   []runner.Share
		samples  []nvml.Sample
		stopped  []string
		reason   string // of the first stopped
		warnings int
	}{
		{"both within their shares", ownUID, onGPU0(proc(100, 20000), proc(101, 20000), proc(200, 30720)), nil, "", 0},
		{"within the tolerance", ownUID, onGPU0(proc(100, 40960+2048)), nil, "", 0},
		{"two processes together over", ownUID, onGPU0(proc(100, 30000), proc(101, 15000), proc(200, 1000)),
			[]string{"a-big"}, "used 45000 MiB of GPU GPU-0, over its share of 40960 MiB (gpu_memory_mib)", 0},
		{"another process's memory is not counted", ownUID, onGPU0(proc(300, 70000), proc(999, 70000), proc(200, 100)), nil, "", 0},
		{"a process without an attempt id counts by its uid", ownUID, onGPU0(proc(102, 50000)),
			[]string{"a-big"}, "used 50000 MiB of GPU GPU-0, over its share of 40960 MiB (gpu_memory_mib)", 0},
		{"a process naming another attempt counts for its own uid's", ownUID, onGPU0(proc(400, 70000), proc(200, 100)),
			[]string{"a-big"}, "used 70000 MiB of GPU GPU-0, over its share of 40960 MiB (gpu_memory_mib)", 0},
		{"a process of no task's uid naming an attempt is not counted", ownUID, onGPU0(proc(500, 70000), proc(200, 100)), nil, "", 0},
		{"one user: traced by the environment", oneUser, onGPU0(proc(600, 20000), proc(601, 40000)),
			[]string{"a-small"}, "used 40000 MiB of GPU GPU-0, over its share of 30720 MiB (gpu_memory_mib)", 0},
		{"one user: a process naming no attempt is not counted", oneUser, onGPU0(proc(602, 70000)), nil, "", 0},
		{"memory NVML cannot tell is not counted", ownUID, onGPU0(nvml.Process{PID: 200}), nil, "", 0},
		{"processes unread", ownUID, []nvml.Sample{{UUID: "GPU-0"}}, nil, "", 1},
		{"GPU not sampled", ownUID, []nvml.Sample{{UUID: "GPU-1", ProcessesRead: true, Processes: []nvml.Process{proc(300, 70000)}}}, nil, "", 1},
		{"a process on a GPU its task was not given", ownUID, append(onGPU0(proc(100, 100)), nvml.Sample{UUID: "GPU-1", ProcessesRead: true, Processes: []nvml.Process{{PID: 102}}}),
			[]string{"a-big"}, "ran on GPU GPU-1, which it was not given (its share is of GPU GPU-0)", 0},
		{"one user: a process naming an attempt on another GPU is its own word", oneUser, append(onGPU0(proc(600, 100)), nvml.Sample{UUID: "GPU-1", ProcessesRead: true, Processes: []nvml.Process{proc(601, 70000)}}), nil, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			holder := &fakeShares{shares: c.shares}
			w := (&pidTable{procs: procs}).watchdog(holder, slog.New(slog.NewTextHandler(&logs, nil)))
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
			if onForeign := strings.HasPrefix(c.reason, "ran on GPU"); onForeign != (len(holder.foreign) > 0) {
				t.Fatalf("stopped as on a GPU not given: %v, want %v", holder.foreign, onForeign)
			}
			if n := strings.Count(logs.String(), "cannot read the processes"); n != c.warnings {
				t.Fatalf("%d warnings about unread processes, want %d:\n%s", n, c.warnings, logs.String())
			}
		})
	}
}

// Which processes the watchdog looks up: on a shared GPU, each one (by
// uid, and where tasks share one user by environment); on other GPUs only
// while a share has a uid of its own, and by uid alone; none at all
// without shares.
func TestShareWatchdogLooksUpOnlyWhatItNeeds(t *testing.T) {
	samples := []nvml.Sample{
		{UUID: "GPU-0", ProcessesRead: true, Processes: []nvml.Process{proc(100, 10)}},
		{UUID: "GPU-1", ProcessesRead: true, Processes: []nvml.Process{proc(900, 70000), proc(901, 10)}},
	}
	cases := []struct {
		name              string
		shares            []runner.Share
		uidLooks, envLook []uint32
	}{
		{"own uid", []runner.Share{{TaskID: "t", AttemptID: "a", GPU: "GPU-0", MiB: 1024, UID: 61000, OwnUID: true}}, []uint32{100, 900, 901}, nil},
		{"one user", []runner.Share{{TaskID: "t", AttemptID: "a", GPU: "GPU-0", MiB: 1024, UID: 1000}}, []uint32{100}, []uint32{100}},
		{"no shares", nil, nil, nil},
	}
	for _, c := range cases {
		table := &pidTable{procs: map[uint32]pidInfo{100: {"x", 62000}, 900: {"x", 62000}, 901: {"a", 62001}}}
		table.watchdog(&fakeShares{shares: c.shares}, slog.New(slog.DiscardHandler)).check(samples)
		if !slices.Equal(table.looked, c.uidLooks) || !slices.Equal(table.envLooked, c.envLook) {
			t.Errorf("%s: looked up uids of %v and environments of %v, want %v and %v", c.name, table.looked, table.envLooked, c.uidLooks, c.envLook)
		}
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
