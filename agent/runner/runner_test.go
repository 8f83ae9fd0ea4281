package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// inProcess hands out one in-process exec executor, standing in for the
// plugin host.
type inProcess struct{ e executor.Executor }

func (h inProcess) Get(context.Context, string) (executor.Executor, error) { return h.e, nil }

// recorder is a coordinator that keeps what the runner told it.
type recorder struct {
	mu     sync.Mutex
	stdout map[string]*strings.Builder
	stderr map[string]*strings.Builder
	ended  map[string]string // task id -> "finish <code>" or "fail <reason>"
	// reports are the attempts that reported an end, in order.
	reports []string
	// peers answer rendezvous; until setPeers, a rendezvous waits, as
	// the coordinator's long poll does. joined are the calls, and waiting
	// is closed at the first.
	peers   []api.GangPeer
	joined  []api.RendezvousRequest
	met     chan struct{} // closed by setPeers
	waiting chan struct{}
	// finishes are the finish requests, by task id.
	finishes map[string]api.FinishRequest
	// started are the tasks whose start was reported.
	started map[string]bool
	// startPreflight is the preflight report each start carried.
	startPreflight map[string]*api.PreflightReport
	// failPreflight is the preflight report each fail carried.
	failPreflight map[string]*api.PreflightReport
}

func (r *recorder) Rendezvous(ctx context.Context, _ string, req api.RendezvousRequest) (api.RendezvousResponse, error) {
	r.mu.Lock()
	r.joined = append(r.joined, req)
	if len(r.joined) == 1 {
		close(r.waiting)
	}
	r.mu.Unlock()
	select {
	case <-r.met:
	case <-ctx.Done():
		return api.RendezvousResponse{}, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return api.RendezvousResponse{Ready: true, Peers: r.peers}, nil
}

// setPeers answers every rendezvous, waiting or to come, with peers.
func (r *recorder) setPeers(peers ...api.GangPeer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.peers = peers
	close(r.met)
}

func newRecorder() *recorder {
	return &recorder{stdout: map[string]*strings.Builder{}, stderr: map[string]*strings.Builder{}, ended: map[string]string{}, finishes: map[string]api.FinishRequest{}, started: map[string]bool{}, startPreflight: map[string]*api.PreflightReport{}, failPreflight: map[string]*api.PreflightReport{}, met: make(chan struct{}), waiting: make(chan struct{})}
}

func (r *recorder) StartWith(_ context.Context, id string, req api.StartRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started[id] = true
	r.startPreflight[id] = req.Preflight
	return nil
}

// wasStarted reports whether task id's start was reported.
func (r *recorder) wasStarted(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started[id]
}

func (r *recorder) AppendLogs(_ context.Context, id string, req api.LogsRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.stdout
	if req.Stream == api.StreamStderr {
		m = r.stderr
	}
	if m[id] == nil {
		m[id] = &strings.Builder{}
	}
	m[id].WriteString(req.Data)
	return nil
}

func (r *recorder) Finish(_ context.Context, id string, req api.FinishRequest) (api.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended[id] = fmt.Sprintf("finish %d", req.ExitCode)
	r.finishes[id] = req
	r.reports = append(r.reports, req.AttemptID)
	return api.Task{}, nil
}

func (r *recorder) Fail(_ context.Context, id string, req api.FailRequest) (api.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended[id] = "fail " + req.Reason
	r.failPreflight[id] = req.Preflight
	if req.GPUFault != "" {
		r.ended[id] += " [gpu_fault " + req.GPUFault + "]"
	}
	r.reports = append(r.reports, req.AttemptID)
	return api.Task{}, nil
}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reports)
}

func (r *recorder) out(id string) (stdout, stderr, ended string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.stdout[id]; b != nil {
		stdout = b.String()
	}
	if b := r.stderr[id]; b != nil {
		stderr = b.String()
	}
	return stdout, stderr, r.ended[id]
}

// searchableRoot returns a work root that task users can reach: t.TempDir
// is inside a 0700 directory, opened to search (not listing) here.
func searchableRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func newRunner(t *testing.T, users Users) (*Runner, *recorder, string) {
	t.Helper()
	return newRunnerWith(t, users, SandboxConfig{})
}

// newRunnerWith is newRunner asking for sandbox sb.
func newRunnerWith(t *testing.T, users Users, sb SandboxConfig) (*Runner, *recorder, string) {
	t.Helper()
	rec := newRecorder()
	root := searchableRoot(t)
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, WorkRoot: root, Users: users, StopGrace: time.Second, Sandbox: sb})
	return r, rec, root
}

var seq struct {
	sync.Mutex
	n int
}

// shellTask is an assignment running script with sh -c, with job env;
// args become $1, $2... Each holds a GPU of its own, as the coordinator
// hands them out.
func shellTask(t *testing.T, script string, env map[string]string, args ...string) api.Assignment {
	t.Helper()
	cfg, err := json.Marshal(exec.Config{Command: "sh", Args: append([]string{"-c", script, "sh"}, args...), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	seq.Lock()
	seq.n++
	n := seq.n
	seq.Unlock()
	return api.Assignment{ID: fmt.Sprintf("task-%d", n), JobID: "job-1", AttemptID: fmt.Sprintf("attempt-%d", n), Executor: "exec", Config: cfg, Devices: []string{fmt.Sprintf("GPU-%d", n)}}
}

func rootOnly(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running tasks as other uids needs root; CI runs this as root")
	}
}

func TestUIDPool(t *testing.T) {
	p := NewUIDPool(61000, 3)
	var got []User
	for range 3 {
		u, err := p.Acquire()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, u)
	}
	for i, u := range got {
		if want := uint32(61000 + i); u.UID != want || u.GID != want || !u.Switch || !u.Exclusive {
			t.Errorf("slot %d: %+v, want uid=gid=%d, switching, exclusive", i, u, want)
		}
	}
	if _, err := p.Acquire(); err == nil {
		t.Fatal("a fourth task got a uid from a pool of three")
	}
	p.Release(got[1], true)
	if u, err := p.Acquire(); err != nil || u.UID != 61001 {
		t.Errorf("after releasing 61001: %+v, %v", u, err)
	}
}

// A uid some process already runs under (another agent's task on the same
// host) is skipped.
func TestUIDPoolSkipsUIDsInUse(t *testing.T) {
	p := NewUIDPool(61000, 3)
	p.busy = func(uid uint32) bool { return uid == 61000 }
	u, err := p.Acquire()
	if err != nil || u.UID != 61001 {
		t.Fatalf("Acquire = %+v, %v; want 61001, skipping the busy 61000", u, err)
	}
	// A uid handed back is looked up again right before it is handed
	// out, clean or not: a process that outlived its task is found
	// there, and the uid skipped while it runs.
	for _, clean := range []bool{true, false} {
		scans := 0
		p.busy = func(uid uint32) bool { scans++; return uid <= 61001 }
		p.Release(u, clean)
		again, err := p.Acquire()
		if err != nil || again.UID != 61002 || scans != 3 {
			t.Fatalf("after a release (clean %v), with it busy: %+v, %v, %d scans; want 61002 after scanning all three", clean, again, err, scans)
		}
		u = again
	}
	p.busy = func(uint32) bool { return false }
	if again, err := p.Acquire(); err != nil || again.UID != 61000 {
		t.Fatalf("once nothing runs under them: %+v, %v; want 61000", again, err)
	}
}
