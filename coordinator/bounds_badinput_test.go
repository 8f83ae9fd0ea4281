package coordinator_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// boundsFixture is a coordinator with two workers (one holding a task
// under a long lease, so no lease lapses during a test), an allowlist row
// for loopback, and a worker that awaits approval.
type boundsFixture struct {
	h                    *coordinatortest.Harness
	worker, other        string // worker tokens: the holder and a second worker
	pending              string // a pending worker's token
	heldTask, heldAttmpt string
	artifact             string
}

func newBoundsFixture(t *testing.T, opts coordinatortest.Options) boundsFixture {
	t.Helper()
	h := coordinatortest.Start(t, opts)
	ctx := t.Context()
	join := h.Client(t, h.JoinToken)
	admin := h.Client(t, h.AdminToken)
	r1, err := join.Register(ctx, api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec", "shell"},
		Devices: []api.Device{{Index: 0, UUID: "GPU-0", Name: "H100", MemoryMiB: 81920, Healthy: true}, {Index: 1, UUID: "GPU-1", Name: "H100", MemoryMiB: 81920, Healthy: true}}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := join.Register(ctx, api.RegisterRequest{WorkerID: "w2", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	approval := mintJoin(t, admin, api.CreateTokenRequest{Name: "needs-approval", RequiresApproval: true})
	rp, err := h.Client(t, approval.Token).Register(ctx, api.RegisterRequest{WorkerID: "wp", Executors: []string{"exec"}})
	if err != nil || rp.Status != api.WorkerPending {
		t.Fatalf("pending registration: %+v %v", rp, err)
	}
	allowlist(t, admin, "lab", []string{"127.0.0.0/8"}, map[string]string{"vm-1": "127.0.0.1"})
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), LeaseSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	held, err := h.Client(t, r1.WorkerToken).Acquire(ctx, api.AcquireRequest{})
	if err != nil || held.Task == nil {
		t.Fatalf("acquire: %+v %v", held, err)
	}
	art := []byte("model weights")
	if _, err := admin.PutArtifact(ctx, digest(art), art); err != nil {
		t.Fatal(err)
	}
	return boundsFixture{h: h, worker: r1.WorkerToken, other: r2.WorkerToken, pending: rp.WorkerToken,
		heldTask: held.Task.ID, heldAttmpt: held.Task.AttemptID, artifact: digest(art)}
}

// logIndex is the index of the last entry in the coordinator's Raft log.
// Every proposal appends there before its answer comes back, so it moves
// exactly when something was proposed; the applied index is no substitute,
// since raft publishes it a moment after the state machine answers.
func logIndex(h *coordinatortest.Harness) uint64 { return h.Server.Node().Raft().LastIndex() }

// obj renders a JSON object from key/value pairs, values marshalled.
func obj(t *testing.T, kv ...any) string {
	t.Helper()
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", kv[i], jsonBody(t, kv[i+1]))
	}
	b.WriteByte('}')
	return b.String()
}

func many(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func manyMap(n int, value string) map[string]string {
	out := make(map[string]string, n)
	for i := range n {
		out[fmt.Sprintf("k%d", i)] = value
	}
	return out
}

// TestBoundsBadInputIsRefusedAndChangesNothing repeats finding 4 and the
// strictness items of finding 6: oversized strings, lists and maps from
// workers and clients, bodies encoding/json would accept loosely, the
// reserved worker id self, and a pending worker reading an artifact. Each
// is refused with its code, the message names the field without echoing
// the value, and the replicated state does not move.
func TestBoundsBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newBoundsFixture(t, coordinatortest.Options{})
	h := f.h
	admin, join := h.AdminToken, h.JoinToken
	mib := strings.Repeat("x", 1<<20)
	tenMiB := strings.Repeat("u", 10<<20)
	fifteenMiB := strings.Repeat("v", 15<<20)
	dev := func(uuid, name string) api.Device { return api.Device{UUID: uuid, Name: name, Healthy: true} }
	execJob := func(cfg any) string { return obj(t, "executor", "exec", "config", cfg) }
	digests := many(api.MaxDigests+1, func(i int) string { return digest([]byte{byte(i), byte(i >> 8)}) })

	cases := []struct {
		name, method, path, token, body string
		status                          int
		code                            api.Code
		want                            string // the message names the field
	}{
		// registration (finding 4: a 15 MiB label value)
		{"register: 15 MiB label value", "POST", "/v1/workers/register", join, obj(t, "worker_id", "big", "labels", map[string]string{"x": fifteenMiB}), 400, api.CodeInvalidArgument, `labels["x"]: value is 15728640 bytes, at most 256`},
		{"register: long label key", "POST", "/v1/workers/register", join, obj(t, "labels", map[string]string{strings.Repeat("k", 129): "v"}), 400, api.CodeInvalidArgument, "labels: a key of 129 bytes"},
		{"register: empty label key", "POST", "/v1/workers/register", join, obj(t, "labels", map[string]string{"": "v"}), 400, api.CodeInvalidArgument, "labels: keys must not be empty"},
		{"register: too many labels", "POST", "/v1/workers/register", join, obj(t, "labels", manyMap(api.MaxLabels+1, "v")), 400, api.CodeInvalidArgument, "labels: 65 entries, at most 64"},
		{"register: 1 MiB executor name", "POST", "/v1/workers/register", join, obj(t, "executors", []string{mib}), 400, api.CodeInvalidArgument, "executors[0]: 1048576 bytes"},
		{"register: too many executors", "POST", "/v1/workers/register", join, obj(t, "executors", many(api.MaxExecutors+1, func(i int) string { return fmt.Sprintf("e%d", i) })), 400, api.CodeInvalidArgument, "executors: 33 entries"},
		{"register: 10 MiB device uuid", "POST", "/v1/workers/register", join, obj(t, "devices", []api.Device{dev(tenMiB, "H100")}), 400, api.CodeInvalidArgument, "devices[0].uuid: 10485760 bytes"},
		{"register: long device name", "POST", "/v1/workers/register", join, obj(t, "devices", []api.Device{dev("GPU-9", mib)}), 400, api.CodeInvalidArgument, "devices[0].name: 1048576 bytes"},
		{"register: long driver version", "POST", "/v1/workers/register", join, obj(t, "devices", []api.Device{{UUID: "GPU-9", DriverVersion: strings.Repeat("9", 65)}}), 400, api.CodeInvalidArgument, "devices[0].driver_version"},
		{"register: too many devices", "POST", "/v1/workers/register", join, obj(t, "devices", func() []api.Device {
			out := make([]api.Device, api.MaxDevices+1)
			for i := range out {
				out[i] = dev(fmt.Sprintf("GPU-%d", i), "H100")
			}
			return out
		}()), 400, api.CodeInvalidArgument, "devices: 257 entries"},
		{"register: long capability", "POST", "/v1/workers/register", join, obj(t, "capabilities", []string{strings.Repeat("c", 65)}), 400, api.CodeInvalidArgument, "capabilities[0]: 65 bytes"},
		{"register: too many capabilities", "POST", "/v1/workers/register", join, obj(t, "capabilities", many(api.MaxCapabilities+1, func(i int) string { return fmt.Sprint(i) })), 400, api.CodeInvalidArgument, "capabilities: 65 entries"},
		{"register: long instance_id", "POST", "/v1/workers/register", join, obj(t, "instance_id", mib), 400, api.CodeInvalidArgument, "instance_id: 1048576 bytes"},
		{"register: huge worker id", "POST", "/v1/workers/register", join, obj(t, "worker_id", mib), 400, api.CodeInvalidArgument, "worker_id"},
		{"register: worker id self", "POST", "/v1/workers/register", join, obj(t, "worker_id", "self"), 400, api.CodeReservedIdentifier, `worker_id "self" is reserved`},
		// enrollment
		{"enroll: worker id self", "POST", "/v1/workers/enroll", "", obj(t, "cluster_key", "lab", "external_worker_key", "vm-1", "worker_id", "self"), 400, api.CodeReservedIdentifier, `worker_id "self" is reserved`},
		{"enroll: 1 MiB label", "POST", "/v1/workers/enroll", "", obj(t, "cluster_key", "lab", "external_worker_key", "vm-1", "labels", map[string]string{"x": mib}), 400, api.CodeInvalidArgument, `labels["x"]: value is 1048576 bytes`},
		{"enroll: 10 MiB device uuid", "POST", "/v1/workers/enroll", "", obj(t, "cluster_key", "lab", "external_worker_key", "vm-1", "devices", []api.Device{dev(tenMiB, "x")}), 400, api.CodeInvalidArgument, "devices[0].uuid"},
		{"enroll: 1 MiB external key", "POST", "/v1/workers/enroll", "", obj(t, "cluster_key", "lab", "external_worker_key", mib), 400, api.CodeInvalidArgument, "external_worker_key"},
		{"cluster: 1 MiB cidr", "POST", "/v1/clusters", admin, obj(t, "cluster_key", "lab2", "allowed_source_cidrs", []string{mib}), 400, api.CodeInvalidArgument, "allowed_source_cidrs"},
		// heartbeats (finding 4: a 1 MiB executor name, a 10 MiB device uuid)
		{"heartbeat: 1 MiB executor name", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "executors", []string{mib}), 400, api.CodeInvalidArgument, "executors[0]: 1048576 bytes"},
		{"heartbeat: unknown device health", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "devices", []api.Device{{UUID: "GPU-0", Health: "fine"}}), 400, api.CodeInvalidArgument, "devices[0].health"},
		{"heartbeat: healthy=true with health unhealthy", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "devices", []api.Device{{UUID: "GPU-0", Healthy: true, Health: api.HealthUnhealthy}}), 400, api.CodeInvalidArgument, "devices[0].healthy"},
		{"heartbeat: long health reason", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "devices", []api.Device{{UUID: "GPU-0", Health: api.HealthUnhealthy, HealthReason: mib}}), 400, api.CodeInvalidArgument, "devices[0].health_reason"},
		{"heartbeat: 10 MiB device uuid", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "devices", []api.Device{dev(tenMiB, "H100")}), 400, api.CodeInvalidArgument, "devices[0].uuid: 10485760 bytes"},
		{"heartbeat: too many executors", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "executors", many(api.MaxExecutors+1, func(i int) string { return fmt.Sprintf("e%d", i) })), 400, api.CodeInvalidArgument, "executors: 33 entries"},
		{"heartbeat: long running task id", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "running_task_ids", []string{mib}), 400, api.CodeInvalidArgument, "running_task_ids[0]: 1048576 bytes"},
		{"heartbeat: too many running task ids", "POST", "/v1/workers/self/heartbeat", f.worker, obj(t, "running_task_ids", many(api.MaxRunningTasks+1, func(i int) string { return fmt.Sprint(i) })), 400, api.CodeInvalidArgument, "running_task_ids: 4097 entries"},
		// jobs
		{"job: 2 MiB config", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "env": map[string]string{"A": mib + mib}}), 400, api.CodeInvalidArgument, "config: 2097"},
		{"job: long command", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": strings.Repeat("c", api.MaxCommandBytes+1)}), 400, api.CodeInvalidArgument, "config.command: 4097 bytes"},
		{"job: long dir", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "dir": strings.Repeat("d", api.MaxPathBytes+1)}), 400, api.CodeInvalidArgument, "config.dir: 4097 bytes"},
		{"job: too many args", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "args": many(api.MaxArgs+1, func(int) string { return "a" })}), 400, api.CodeInvalidArgument, "config.args: 1025 entries"},
		{"job: long arg", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "args": []string{strings.Repeat("a", api.MaxArgBytes+1)}}), 400, api.CodeInvalidArgument, "config.args[0]: 32769 bytes"},
		{"job: too many env", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "env": manyMap(api.MaxEnv+1, "v")}), 400, api.CodeInvalidArgument, "config.env: 257 entries"},
		{"job: long env value", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "env": map[string]string{"A": strings.Repeat("v", api.MaxEnvValueBytes+1)}}), 400, api.CodeInvalidArgument, `config.env["A"]: value is 32769 bytes`},
		{"job: long env key", "POST", "/v1/jobs", admin, execJob(map[string]any{"command": "true", "env": map[string]string{strings.Repeat("K", api.MaxEnvKeyBytes+1): "v"}}), 400, api.CodeInvalidArgument, "config.env: a key of 257 bytes"},
		{"job: long affinity", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "affinity", strings.Repeat("a", api.MaxAffinityBytes)), 400, api.CodeInvalidArgument, "affinity: 65538 bytes"},
		{"job: too many inputs", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "inputs", digests), 400, api.CodeInvalidArgument, "inputs: 257 entries"},
		{"job: long idempotency key", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "idempotency_key", strings.Repeat("i", 129)), 400, api.CodeInvalidArgument, "idempotency_key: 129 bytes"},
		{"job: long gpu model", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "resources", map[string]string{"gpu_model": mib}), 400, api.CodeInvalidArgument, "resources.gpu_model: 1048576 bytes"},
		{"job: long capability", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "capability", strings.Repeat("c", 65)), 400, api.CodeInvalidArgument, "capability: 65 bytes"},
		{"job: target id self", "POST", "/v1/jobs", admin, obj(t, "executor", "exec", "config", map[string]string{"command": "true"}, "target", map[string]string{"kind": "worker", "id": "self"}), 400, api.CodeReservedIdentifier, `"self" is reserved`},
		// tokens, groups
		{"join token: long label value", "POST", "/v1/tokens", admin, obj(t, "kind", "join", "name", "j", "labels", map[string]string{"zone": strings.Repeat("z", 257)}), 400, api.CodeInvalidArgument, `labels["zone"]: value is 257 bytes`},
		{"group: id self", "POST", "/v1/groups", admin, obj(t, "group_id", "self"), 400, api.CodeReservedIdentifier, "reserved"},
		// task writes
		{"finish: 2 MiB output", "POST", "/v1/tasks/" + f.heldTask + "/finish", f.worker, obj(t, "attempt_id", f.heldAttmpt, "exit_code", 0, "output", mib+mib), 400, api.CodeInvalidArgument, "output: 2097154 bytes"},
		{"finish: too many artifacts", "POST", "/v1/tasks/" + f.heldTask + "/finish", f.worker, obj(t, "attempt_id", f.heldAttmpt, "exit_code", 0, "artifacts", digests), 400, api.CodeInvalidArgument, "artifacts: 257 entries"},
		{"fail: long reason", "POST", "/v1/tasks/" + f.heldTask + "/fail", f.worker, obj(t, "attempt_id", f.heldAttmpt, "reason", mib), 400, api.CodeInvalidArgument, "reason: 1048576 bytes"},
		{"logs: long attempt id", "POST", "/v1/tasks/" + f.heldTask + "/logs", f.worker, obj(t, "attempt_id", mib, "stream", "stdout", "seq", 1, "data", "x"), 400, api.CodeInvalidArgument, "attempt_id: 1048576 bytes"},
		// strict JSON (finding 6)
		{"json: duplicate key", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"true"},"executor":"evil"}`, 400, api.CodeInvalidArgument, `key "executor" appears twice`},
		{"json: duplicate key in exec config", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"true","command":"rm"}}`, 400, api.CodeInvalidArgument, `key "command" appears twice`},
		{"json: duplicate worker id", "POST", "/v1/workers/register", join, `{"worker_id":"ok","worker_id":"other"}`, 400, api.CodeInvalidArgument, "appears twice"},
		{"json: case-variant key", "POST", "/v1/jobs", admin, `{"EXECUTOR":"exec","config":{"command":"true"}}`, 400, api.CodeInvalidArgument, `unknown field "EXECUTOR"`},
		{"json: case-variant key in exec config", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"Command":"true"}}`, 400, api.CodeInvalidArgument, `unknown field "Command"`},
		{"json: case-variant key in a heartbeat", "POST", "/v1/workers/self/heartbeat", f.worker, `{"Executors":["exec","evil"]}`, 400, api.CodeInvalidArgument, `unknown field "Executors"`},
		{"json: invalid UTF-8", "POST", "/v1/workers/self/heartbeat", f.worker, "{\"executors\":[\"ex\xffec\"]}", 400, api.CodeInvalidArgument, "invalid UTF-8"},
		{"json: invalid UTF-8 in a label", "POST", "/v1/workers/register", join, "{\"labels\":{\"zone\":\"\xc3(\"}}", 400, api.CodeInvalidArgument, "invalid UTF-8"},
		{"json: lone surrogate", "POST", "/v1/workers/register", join, `{"worker_id":"ok","labels":{"zone":"\ud800"}}`, 400, api.CodeInvalidArgument, "lone surrogate"},
		{"json: lone low surrogate in a job name", "POST", "/v1/jobs", admin, `{"executor":"exec","name":"\udc01","config":{"command":"true"}}`, 400, api.CodeInvalidArgument, "lone surrogate"},
		// a pending worker reading an artifact
		{"artifact: pending worker", "GET", "/v1/artifacts/" + f.artifact, f.pending, ``, 403, api.CodeWorkerPending, "awaits approval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, h)
			r := call(t, h.URL, c.method, c.path, c.token, []byte(c.body), nil)
			if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
				t.Fatalf("got %d %.300s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			if !strings.Contains(r.body.Error.Message, c.want) {
				t.Errorf("message %q does not say %q", r.body.Error.Message, c.want)
			}
			if len(r.raw) > 2048 {
				t.Errorf("the refusal is %d bytes: it echoes the oversized value", len(r.raw))
			}
			if after := snapshot(t, h); !bytes.Equal(before, after) {
				t.Errorf("refused request changed the state")
			}
		})
	}
}

// TestIdenticalHeartbeatsProposeNothing repeats the write amplification
// of finding 4: a heartbeat that repeats the worker's inventory renews
// its lease on the leader and writes nothing to Raft; a changed inventory
// is still written.
func TestIdenticalHeartbeatsProposeNothing(t *testing.T) {
	f := newBoundsFixture(t, coordinatortest.Options{})
	h := f.h
	wk, err := h.Client(t, h.AdminToken).Worker(t.Context(), "w1")
	if err != nil {
		t.Fatal(err)
	}
	same := jsonBody(t, api.HeartbeatRequest{RunningTaskIDs: []string{f.heldTask}, Executors: wk.Executors, Devices: wk.Devices})
	// The same inventory listed in another order is no change either.
	reordered := jsonBody(t, api.HeartbeatRequest{RunningTaskIDs: []string{f.heldTask},
		Executors: []string{wk.Executors[1], wk.Executors[0]}, Devices: []api.Device{wk.Devices[1], wk.Devices[0]}})
	bare := jsonBody(t, api.HeartbeatRequest{RunningTaskIDs: []string{f.heldTask}})
	before := logIndex(h)
	for i := range 50 {
		for _, body := range [][]byte{same, reordered, bare} {
			decodeOK(t, call(t, h.URL, "POST", "/v1/workers/self/heartbeat", f.worker, body, nil), 200, nil)
		}
		if i == 0 && logIndex(h) != before {
			t.Fatalf("the first unchanged heartbeats proposed (index %d → %d)", before, logIndex(h))
		}
	}
	if after := logIndex(h); after != before {
		t.Fatalf("150 unchanged heartbeats moved the log index %d → %d", before, after)
	}
	changed := jsonBody(t, api.HeartbeatRequest{RunningTaskIDs: []string{f.heldTask}, Executors: []string{"exec", "shell", "docker"}, Devices: wk.Devices})
	decodeOK(t, call(t, h.URL, "POST", "/v1/workers/self/heartbeat", f.worker, changed, nil), 200, nil)
	if logIndex(h) == before {
		t.Fatalf("a changed inventory was not written")
	}
}

// TestRefusedLogPostsProposeNothing repeats finding 6: log posts that the
// state machine would refuse (unknown task, another worker's task, a
// made-up attempt) are answered before anything is proposed.
func TestRefusedLogPostsProposeNothing(t *testing.T) {
	f := newBoundsFixture(t, coordinatortest.Options{})
	h := f.h
	post := func(token, task, attempt string) rawResp {
		return call(t, h.URL, "POST", "/v1/tasks/"+task+"/logs", token, jsonBody(t, api.LogsRequest{AttemptID: attempt, Stream: "stdout", Seq: 1, Data: "hello"}), nil)
	}
	cases := []struct {
		name, token, task, attempt string
		status                     int
		code                       api.Code
	}{
		{"unknown task", f.worker, "jnope-0", f.heldAttmpt, 404, api.CodeNotFound},
		{"another worker's task", f.other, f.heldTask, f.heldAttmpt, 403, api.CodeWrongClaimant},
		{"made-up attempt", f.worker, f.heldTask, "a-made-up", 409, api.CodeStaleAttempt},
	}
	before := logIndex(h)
	snap := snapshot(t, h)
	for _, c := range cases {
		for range 100 {
			wantCode(t, c.name, post(c.token, c.task, c.attempt), c.status, c.code)
		}
	}
	if after := logIndex(h); after != before {
		t.Fatalf("300 refused log posts moved the log index %d → %d", before, after)
	}
	if !bytes.Equal(snap, snapshot(t, h)) {
		t.Fatalf("refused log posts changed the state")
	}
	decodeOK(t, post(f.worker, f.heldTask, f.heldAttmpt), 200, nil)
	if logIndex(h) == before {
		t.Fatalf("an accepted log post was not written")
	}
}
