package runner

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func shared(a api.Assignment, gpu string, mib uint64, mode string) api.Assignment {
	a.Devices = []string{gpu}
	a.Resources = &api.Resources{GPUs: 1, GPUMemoryMiB: mib, GPUSharing: mode}
	return a
}

// Tasks sharing one GPU run side by side, each told its share (and under
// MPS held to it); the watchdog's stop ends one with its reason and
// leaves the other running.
func TestSharedTasksRunSideBySideAndStopAlone(t *testing.T) {
	rec := newRecorder()
	mps := t.TempDir() // a sandboxed task must reach it: it exists
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second, MPS: func() string { return mps }})
	script := `seen=no; [ -d "$CUDA_MPS_PIPE_DIRECTORY" ] && seen=yes
echo "share=$GPULAYER_GPU_MEMORY_MIB limit=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT pipe=$CUDA_MPS_PIPE_DIRECTORY seen=$seen gpus=$CUDA_VISIBLE_DEVICES"; exec sleep 120`
	big := shared(shellTask(t, script, nil), "GPU-s", 40960, api.SharingEnforced)
	small := shared(shellTask(t, script, nil), "GPU-s", 30720, api.SharingUnenforced)
	done := map[string]chan Outcome{big.AttemptID: make(chan Outcome, 1), small.AttemptID: make(chan Outcome, 1)}
	for _, a := range []api.Assignment{big, small} {
		go func() { done[a.AttemptID] <- r.Run(t.Context(), a) }()
	}
	waitOutput(t, rec, big.ID, "share=40960 limit=0=40960M pipe="+mps+" seen=yes gpus=GPU-s")
	waitOutput(t, rec, small.ID, "share=30720 limit=0=30720M pipe="+mps+" seen=yes gpus=GPU-s")

	shares := r.Shares()
	if len(shares) != 2 || shares[0].GPU != "GPU-s" || shares[1].GPU != "GPU-s" || shares[0].MiB+shares[1].MiB != 71680 {
		t.Fatalf("shares %+v, want both tasks on GPU-s", shares)
	}
	if h, held := r.Holders()["GPU-s"]; held {
		t.Fatalf("the shared GPU is held whole by %+v", h)
	}
	const reason = "used 45000 MiB of GPU GPU-s, over its share of 40960 MiB"
	if !r.StopOverShare(big.AttemptID, reason) {
		t.Fatal("the big task was not running")
	}
	select {
	case out := <-done[big.AttemptID]:
		if !out.Failed || out.End != EndOverShare || out.Reason != reason {
			t.Fatalf("the task over its share ended %+v", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the task over its share was not stopped")
	}
	if _, _, ended := rec.out(big.ID); ended != "fail "+reason {
		t.Fatalf("reported %q, want the reason", ended)
	}
	select {
	case out := <-done[small.AttemptID]:
		t.Fatalf("the task within its share ended: %+v", out)
	default:
	}
	if r.StopOverShare("no-such-attempt", reason) {
		t.Fatal("stopped an attempt that does not run")
	}
	r.Cancel(small.AttemptID)
	if out := <-done[small.AttemptID]; out.End == EndOverShare {
		t.Fatalf("the cancelled task ended as over its share: %+v", out)
	}
}

// The environment of a shared task: its share always, MPS's variables
// only where the agent has an MPS daemon; an exclusive task gets none.
func TestShareEnv(t *testing.T) {
	cases := []struct {
		name string
		r    *api.Resources
		mps  string
		want string // sorted k=v, space separated
	}{
		{"exclusive", &api.Resources{GPUs: 1, GPUMemoryMiB: 40960}, "/run/mps", ""},
		{"no resources", nil, "/run/mps", ""},
		{"shared, no MPS", &api.Resources{GPUs: 1, GPUMemoryMiB: 2048, GPUSharing: api.SharingUnenforced}, "", "GPULAYER_GPU_MEMORY_MIB=2048"},
		{"shared under MPS", &api.Resources{GPUs: 1, GPUMemoryMiB: 2048, GPUSharing: api.SharingEnforced}, "/run/mps", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M CUDA_MPS_PIPE_DIRECTORY=/run/mps GPULAYER_GPU_MEMORY_MIB=2048"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var kv []string
			for k, v := range shareEnv(c.r, c.mps) {
				kv = append(kv, k+"="+v)
			}
			if got := strings.Join(slices.Sorted(slices.Values(kv)), " "); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Attempts on one GPU keep apart unless both only share it.
func TestHoldsApart(t *testing.T) {
	whole := api.Assignment{Devices: []string{"GPU-0"}, Resources: &api.Resources{GPUs: 1}}
	share := api.Assignment{Devices: []string{"GPU-0"}, Resources: &api.Resources{GPUs: 1, GPUMemoryMiB: 1024, GPUSharing: api.SharingUnenforced}}
	other := api.Assignment{Devices: []string{"GPU-1"}, Resources: share.Resources}
	cases := []struct {
		name string
		a, b api.Assignment
		want bool
	}{
		{"two shares", share, share, false},
		{"share and whole", share, whole, true},
		{"whole and share", whole, share, true},
		{"two wholes", whole, whole, true},
		{"other GPUs", share, other, false},
	}
	for _, c := range cases {
		if got := holdsApart(c.a, c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// An enforced share does not start while no MPS serves the GPUs: it fails
// saying so (to be retried where it can be held); an unenforced one runs.
func TestEnforcedShareFailsWithoutMPS(t *testing.T) {
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second,
		MPS: func() string { return "" }})
	enforced := shared(shellTask(t, `echo ran`, nil), "GPU-e", 1024, api.SharingEnforced)
	if out := r.Run(t.Context(), enforced); !out.Failed || out.End != EndError || out.Reason != ErrShareUnenforceable.Error() {
		t.Fatalf("enforced share without MPS: %+v", out)
	}
	if stdout, _, ended := rec.out(enforced.ID); stdout != "" || ended != "fail "+ErrShareUnenforceable.Error() {
		t.Fatalf("enforced share without MPS: stdout %q, reported %q", stdout, ended)
	}
	if rec.wasStarted(enforced.ID) {
		t.Fatal("enforced share without MPS: its start was reported, though it never ran")
	}
	unenforced := shared(shellTask(t, `echo "share=$GPULAYER_GPU_MEMORY_MIB mps=$CUDA_MPS_PIPE_DIRECTORY"`, nil), "GPU-e", 1024, api.SharingUnenforced)
	if out := r.Run(t.Context(), unenforced); out.Failed || out.ExitCode != 0 {
		t.Fatalf("unenforced share without MPS: %+v", out)
	}
	if stdout, _, _ := rec.out(unenforced.ID); !strings.Contains(stdout, "share=1024 mps=") || strings.Contains(stdout, "mps=/") {
		t.Fatalf("unenforced share without MPS wrote %q", stdout)
	}
}

// A share is listed once its attempt has its task user, not before: until
// then it has no process, and whether its uid is its own is not known
// (the watchdog would trace other processes to it by their word).
func TestSharesListOnlyAttemptsWithTheirUser(t *testing.T) {
	r := New(Config{})
	a := shared(shellTask(t, "true", nil), "GPU-s", 1024, api.SharingUnenforced)
	rn := &run{a: a, cancel: make(chan struct{})}
	r.mu.Lock()
	r.running[a.AttemptID] = rn
	r.mu.Unlock()
	if got := r.Shares(); len(got) != 0 {
		t.Fatalf("shares before the attempt has its user: %+v", got)
	}
	rn.user.Store(&User{UID: 61000, GID: 61000, Switch: true, Exclusive: true})
	if got := r.Shares(); len(got) != 1 || !got[0].OwnUID || got[0].UID != 61000 || got[0].JobID != a.JobID {
		t.Fatalf("shares once it has its user: %+v", got)
	}
}

// A shared task stopped for running on a GPU it was not given ends as
// foreign_gpu, failed with the reason.
func TestStopOnForeignGPU(t *testing.T) {
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: searchableRoot(t), StopGrace: time.Second})
	a := shared(shellTask(t, `echo running; exec sleep 120`, nil), "GPU-s", 1024, api.SharingUnenforced)
	done := make(chan Outcome, 1)
	go func() { done <- r.Run(t.Context(), a) }()
	waitOutput(t, rec, a.ID, "running")
	const reason = "ran on GPU GPU-x, which it was not given (its share is of GPU GPU-s)"
	if !r.StopOnForeignGPU(a.AttemptID, reason) {
		t.Fatal("the task was not running")
	}
	if out := <-done; !out.Failed || out.End != EndForeignGPU || out.Reason != reason {
		t.Fatalf("ended %+v, want failed as foreign_gpu with the reason", out)
	}
	if r.StopOnForeignGPU(a.AttemptID, reason) {
		t.Fatal("stopped an attempt that had ended")
	}
}
