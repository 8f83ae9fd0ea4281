package coordinator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

type rawResp struct {
	status int
	body   api.ErrorBody
	raw    []byte
	header http.Header
}

func call(t *testing.T, url, method, path, token string, body []byte, header map[string]string) rawResp {
	t.Helper()
	req, err := http.NewRequest(method, url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := rawResp{status: resp.StatusCode, raw: raw, header: resp.Header}
	_ = json.Unmarshal(raw, &out.body)
	return out
}

// snapshot renders the replicated state without its audit log: refusals
// are audited by design (coalesced, a moment later), and everything else
// must be left exactly as it was.
func snapshot(t *testing.T, h *coordinatortest.Harness) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := h.Server.Store().Capture().WithoutAudit().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fixture is a coordinator with a worker holding a task and a finished job.
type fixture struct {
	h            *coordinatortest.Harness
	workerToken  string
	otherToken   string
	heldTask     string
	heldAttempt  string
	pendingTask  string
	finishedJob  string
	otherAttempt string
}

func newFixture(t *testing.T) fixture {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: behindLoopbackProxy})
	ctx := t.Context()
	join := h.Client(t, h.JoinToken)
	admin := h.Client(t, h.AdminToken)
	r1, err := join.Register(ctx, api.RegisterRequest{WorkerID: "w1", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := join.Register(ctx, api.RegisterRequest{WorkerID: "w2", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	w1 := h.Client(t, r1.WorkerToken)
	w2 := h.Client(t, r2.WorkerToken)
	cfg := []byte(`{"command":"true"}`)
	done, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w2.Acquire(ctx, api.AcquireRequest{})
	if err != nil || a.Task == nil {
		t.Fatalf("acquire: %v", err)
	}
	if _, err := w2.Finish(ctx, a.Task.ID, api.FinishRequest{AttemptID: a.Task.AttemptID, ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: cfg}); err != nil {
		t.Fatal(err)
	}
	held, err := w1.Acquire(ctx, api.AcquireRequest{})
	if err != nil || held.Task == nil {
		t.Fatalf("acquire: %v", err)
	}
	pending, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "other", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return fixture{h: h, workerToken: r1.WorkerToken, otherToken: r2.WorkerToken, heldTask: held.Task.ID, heldAttempt: held.Task.AttemptID,
		pendingTask: pending.Tasks[0].ID, finishedJob: done.ID, otherAttempt: a.Task.AttemptID}
}

func TestBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	admin, worker, join := f.h.AdminToken, f.workerToken, f.h.JoinToken
	flip := map[bool]string{true: "1", false: "0"}[strings.HasSuffix(admin, "0")]
	wrongSecret := admin[:len(admin)-1] + flip
	forged := "glc_0123456789abcdef_" + strings.Repeat("ab", 32)
	validJob := `{"executor":"exec","config":{"command":"true"}}`
	attempt := `{"attempt_id":"` + f.heldAttempt + `","exit_code":0}`
	huge := append([]byte(`{"executor":"exec","name":"`), bytes.Repeat([]byte("x"), api.MaxJSONBody)...)
	huge = append(huge, []byte(`"}`)...)
	d64, e64 := strings.Repeat("d", 64), strings.Repeat("e", 64)
	var sixes []string
	for i := range 6 { // six of 2 GiB: over the 10 GiB a task may upload
		sixes = append(sixes, fmt.Sprintf(`{"path":"out/%d","sha256":"%s","size":%d}`, i, d64, int64(api.MaxArtifactBody)))
	}
	overCap := strings.Join(sixes, ",")

	cases := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		raw    []byte
		header map[string]string
		status int
		code   api.Code
	}{
		{"no protocol header", "POST", "/v1/jobs", admin, validJob, nil, map[string]string{api.ProtocolHeader: ""}, 400, api.CodeProtocolMismatch},
		{"wrong protocol version", "POST", "/v1/jobs", admin, validJob, nil, map[string]string{api.ProtocolHeader: "2"}, 400, api.CodeProtocolMismatch},
		{"protocol checked before auth", "GET", "/v1/jobs", "", "", nil, map[string]string{api.ProtocolHeader: ""}, 400, api.CodeProtocolMismatch},
		{"malformed JSON", "POST", "/v1/jobs", admin, `{"executor":`, nil, nil, 400, api.CodeInvalidArgument},
		{"unknown field", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"colour":"red"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"trailing data", "POST", "/v1/jobs", admin, validJob + `{}`, nil, nil, 400, api.CodeInvalidArgument},
		{"wrong type", "POST", "/v1/jobs", admin, `{"executor":"exec","count":"two"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"missing executor", "POST", "/v1/jobs", admin, `{"config":{"command":"x"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"exec without command", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"negative gpus", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":-1}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"negative task memory", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"memory_mib":-1}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"task memory past 16 TiB", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"memory_mib":16777217}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"fractional task memory", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"memory_mib":1.5}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"negative cpus", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"cpus":-0.5}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"too many cpus", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"cpus":4097}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"bad target kind", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"target":{"kind":"cluster","id":"a"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"affinity not a list", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"affinity":{"zone":"a"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"affinity rule without selector", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"affinity":[{"weight":10}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"affinity weight out of range", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"affinity":[{"group":"g","weight":1000}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"affinity reserved worker id", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"affinity":[{"worker":"self","required":true}]}`, nil, nil, 400, api.CodeReservedIdentifier},
		{"device link to a device not reported", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"links":[{"peer":"GPU-9","path":"pix"}]}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"device link to itself", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"links":[{"peer":"GPU-1","path":"pix"}]}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"device link with an unknown path", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"links":[{"peer":"GPU-2","path":"warp"}]},{"uuid":"GPU-2","healthy":true}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"NVLinks on a PCIe path", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"links":[{"peer":"GPU-2","path":"phb","nvlinks":4}]},{"uuid":"GPU-2","healthy":true}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"negative NUMA node", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"numa_node":-2}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"spread not a bool", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"spread":"yes"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"oversized body", "POST", "/v1/jobs", admin, "", huge, nil, 413, api.CodeBodyTooLarge},
		{"no token", "GET", "/v1/jobs", "", "", nil, nil, 401, api.CodeUnauthenticated},
		{"not a bearer", "GET", "/v1/jobs", "", "", nil, map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}, 401, api.CodeUnauthenticated},
		{"malformed token", "GET", "/v1/jobs", "glc_nope", "", nil, nil, 401, api.CodeUnauthenticated},
		{"forged token", "GET", "/v1/jobs", forged, "", nil, nil, 401, api.CodeUnauthenticated},
		{"wrong secret", "GET", "/v1/jobs", wrongSecret, "", nil, nil, 401, api.CodeUnauthenticated},
		{"join token submits", "POST", "/v1/jobs", join, validJob, nil, nil, 403, api.CodeForbidden},
		{"worker token submits", "POST", "/v1/jobs", worker, validJob, nil, nil, 403, api.CodeForbidden},
		{"client token acquires", "POST", "/v1/workers/self/acquire", admin, `{}`, nil, nil, 403, api.CodeForbidden},
		{"join token heartbeats", "POST", "/v1/workers/self/heartbeat", join, `{}`, nil, nil, 403, api.CodeForbidden},
		{"worker token registers", "POST", "/v1/workers/register", worker, `{}`, nil, nil, 403, api.CodeForbidden},
		{"client token finishes", "POST", "/v1/tasks/" + f.heldTask + "/finish", admin, attempt, nil, nil, 403, api.CodeForbidden},
		{"finish a task held by another", "POST", "/v1/tasks/" + f.heldTask + "/finish", f.otherToken, attempt, nil, nil, 403, api.CodeWrongClaimant},
		{"start a pending task", "POST", "/v1/tasks/" + f.pendingTask + "/start", worker, `{"attempt_id":"x"}`, nil, nil, 409, api.CodeNotClaimed},
		{"finish with a wrong attempt", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"nope","exit_code":0}`, nil, nil, 409, api.CodeStaleAttempt},
		{"finish without attempt", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"exit_code":0}`, nil, nil, 400, api.CodeInvalidArgument},
		{"logs with bad stream", "POST", "/v1/tasks/" + f.heldTask + "/logs", worker, `{"attempt_id":"` + f.heldAttempt + `","stream":"stdin","seq":1,"data":"x"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"logs with seq 0", "POST", "/v1/tasks/" + f.heldTask + "/logs", worker, `{"attempt_id":"` + f.heldAttempt + `","stream":"stdout","seq":0,"data":"x"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"unknown task", "POST", "/v1/tasks/nope/start", worker, `{"attempt_id":"x"}`, nil, nil, 404, api.CodeNotFound},
		{"mig profile misspelt", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"mig_profile":"1g10gb"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"mig profile without gpus", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"mig_profile":"1g.10gb"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing mode unknown", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"gpu_memory_mib":1024,"gpu_sharing":"sometimes"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing without a share", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"gpu_sharing":"unenforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing over two GPUs", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":2,"gpu_memory_mib":1024,"gpu_sharing":"unenforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing without gpus", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpu_memory_mib":1024,"gpu_sharing":"enforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing of a MIG device", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"gpu_memory_mib":1024,"gpu_sharing":"enforced","mig_profile":"1g.10gb"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu sharing in a gang", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"count":2,"gang":true,"resources":{"gpus":1,"gpu_memory_mib":1024,"gpu_sharing":"unenforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu share above any GPU", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"gpu_memory_mib":1048577,"gpu_sharing":"unenforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"negative gpu share", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"resources":{"gpus":1,"gpu_memory_mib":-1024,"gpu_sharing":"unenforced"}}`, nil, nil, 400, api.CodeInvalidArgument},
		{"device sharing mechanism unknown", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"sharing":"vgpu"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"sharing on a GPU in MIG mode", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"mig_enabled":true,"sharing":"mps"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"sharing on a MIG device", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"mig_enabled":true},{"uuid":"MIG-1","healthy":true,"parent_uuid":"GPU-1","mig_profile":"1g.10gb","sharing":"mps"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"MIG device without its GPU", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"MIG-1","healthy":true,"parent_uuid":"GPU-9","mig_profile":"1g.10gb"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"MIG device of a GPU not in MIG mode", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true},{"uuid":"MIG-1","healthy":true,"parent_uuid":"GPU-1","mig_profile":"1g.10gb"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"MIG device without a profile", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"mig_enabled":true},{"uuid":"MIG-1","healthy":true,"parent_uuid":"GPU-1"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"MIG device with links", "POST", "/v1/workers/self/heartbeat", worker, `{"devices":[{"uuid":"GPU-1","healthy":true,"mig_enabled":true},{"uuid":"GPU-2","healthy":true},{"uuid":"MIG-1","healthy":true,"parent_uuid":"GPU-1","mig_profile":"1g.10gb","links":[{"peer":"GPU-2","path":"pix"}]}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gang of one", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"gang":true}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gang too large", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"gang":true,"count":257}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous of a plain task", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `","address":"10.0.0.1","port":29500}`, nil, nil, 409, api.CodeConflict},
		{"rendezvous without address", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous at a bad address", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `","address":"evil host;rm -rf"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous at a huge address", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `","address":"` + strings.Repeat("a", 300) + `"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous port out of range", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `","address":"10.0.0.1","port":70000}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous waits too long", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"` + f.heldAttempt + `","address":"10.0.0.1","wait_seconds":31}`, nil, nil, 400, api.CodeInvalidArgument},
		{"rendezvous with a wrong attempt", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", worker, `{"attempt_id":"nope","address":"10.0.0.1"}`, nil, nil, 409, api.CodeStaleAttempt},
		{"rendezvous for another's task", "POST", "/v1/tasks/" + f.heldTask + "/rendezvous", f.otherToken, `{"attempt_id":"` + f.heldAttempt + `","address":"10.0.0.1"}`, nil, nil, 403, api.CodeWrongClaimant},
		{"heartbeat max_tasks out of range", "POST", "/v1/workers/self/heartbeat", worker, `{"max_tasks":-1}`, nil, nil, 400, api.CodeInvalidArgument},
		{"unknown job", "GET", "/v1/jobs/nope", admin, "", nil, nil, 404, api.CodeNotFound},
		{"events of an unknown job", "GET", "/v1/jobs/nope/events", admin, "", nil, nil, 404, api.CodeNotFound},
		{"events of a job id too long", "GET", "/v1/jobs/" + strings.Repeat("j", 300) + "/events", admin, "", nil, nil, 404, api.CodeNotFound},
		{"forget an unknown worker", "DELETE", "/v1/workers/nope", admin, "", nil, nil, 404, api.CodeNotFound},
		{"forget a live worker with a task", "DELETE", "/v1/workers/w1", admin, "", nil, nil, 409, api.CodeConflict},
		{"forget a bad worker id", "DELETE", "/v1/workers/Bad%20Id", admin, "", nil, nil, 400, api.CodeInvalidArgument},
		{"forget with a body", "DELETE", "/v1/workers/w2", admin, `{"force":true}`, nil, nil, 400, api.CodeInvalidArgument},
		{"gpu list with an unknown parameter", "GET", "/v1/gpus?model=h100", admin, "", nil, nil, 400, api.CodeInvalidArgument},
		{"gpu list of an unknown worker", "GET", "/v1/gpus?worker=ghost", admin, "", nil, nil, 404, api.CodeNotFound},
		{"gpu list with a bad worker id", "GET", "/v1/gpus?worker=Bad%20Id", admin, "", nil, nil, 400, api.CodeInvalidArgument},
		{"gpu list with the worker twice", "GET", "/v1/gpus?worker=w1&worker=w2", admin, "", nil, nil, 400, api.CodeInvalidArgument},
		{"cancel a finished job", "POST", "/v1/jobs/" + f.finishedJob + "/cancel", admin, "", nil, nil, 409, api.CodeConflict},
		{"reserved worker id", "POST", "/v1/workers/register", join, `{"worker_id":"admin"}`, nil, nil, 400, api.CodeReservedIdentifier},
		{"underscore worker id", "POST", "/v1/workers/register", join, `{"worker_id":"_x"}`, nil, nil, 400, api.CodeReservedIdentifier},
		{"bad worker id", "POST", "/v1/workers/register", join, `{"worker_id":"Bad Id"}`, nil, nil, 400, api.CodeInvalidArgument},
		{"provider origin with a join token", "POST", "/v1/workers/register", join, `{"worker_id":"p1","origin":"provider","instance_id":"i-1"}`, nil, nil, 403, api.CodeForbidden},
		{"acquire waits too long", "POST", "/v1/workers/self/acquire", worker, `{"wait_seconds":31}`, nil, nil, 400, api.CodeInvalidArgument},
		{"unknown route", "GET", "/v1/nothing", admin, "", nil, nil, 404, api.CodeNotFound},
		{"single sign-on not configured", "POST", api.PathAuthOIDC, "", `{"id_token":"a.b.c"}`, nil, nil, 404, api.CodeNotFound},
		{"input not a digest", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":["nope"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input object not a digest", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"ABC","path":"a"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input with an unknown field", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","mode":"0777"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input at an absolute path", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"/etc/passwd"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input path that climbs out", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"data/../../x"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input path not clean", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"a//b"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"input path too long", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"` + strings.Repeat("a", api.MaxPathBytes+1) + `"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"two inputs at one path", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"a"},{"sha256":"` + e64 + `","path":"a"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"an input under another input's file", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[{"sha256":"` + d64 + `","path":"a"},{"sha256":"` + e64 + `","path":"a/b"}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"too many inputs", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"inputs":[` + strings.Repeat(`"`+d64+`",`, api.MaxDigests) + `"` + d64 + `"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"output glob that climbs out", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"outputs":["../*"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"output glob absolute", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"outputs":["/etc/*"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"output glob malformed", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"outputs":["out/["]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"output glob too long", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"outputs":["` + strings.Repeat("a", api.MaxOutputGlobBytes+1) + `"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"too many output globs", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"outputs":[` + strings.Repeat(`"a",`, api.MaxOutputGlobs) + `"b"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"finish with an artifact not a digest", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"` + f.heldAttempt + `","exit_code":0,"artifacts":["nope"]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"finish with an artifact never uploaded", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"` + f.heldAttempt + `","exit_code":0,"artifacts":[{"path":"out/a","sha256":"` + d64 + `","size":1}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"finish with an artifact path outside", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"` + f.heldAttempt + `","exit_code":0,"artifacts":[{"path":"../a","sha256":"` + d64 + `","size":1}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"finish with a negative artifact size", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"` + f.heldAttempt + `","exit_code":0,"artifacts":[{"path":"a","sha256":"` + d64 + `","size":-1}]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"finish with outputs over the task cap", "POST", "/v1/tasks/" + f.heldTask + "/finish", worker, `{"attempt_id":"` + f.heldAttempt + `","exit_code":0,"artifacts":[` + overCap + `]}`, nil, nil, 400, api.CodeInvalidArgument},
		{"worker uploads without a task that declares outputs", "PUT", "/v1/artifacts/" + d64, worker, "bytes", nil, nil, 403, api.CodeForbidden},
		// Only a coordinator, by its peer certificate, registers an
		// address; loopback, a forwarding header or an admin token is not
		// one (TestNodeAddressNeedsAPeerCertificate has the rest).
		{"node address forwarded by a follower", "PUT", "/v1/operator/nodes/" + f.h.Server.Node().ID(), "", `{"http_addr":"http://evil.example:80"}`, nil, map[string]string{httpapi.ForwardedHeader: "c9"}, 401, api.CodeUnauthenticated},
		{"node address from loopback without a certificate", "PUT", "/v1/operator/nodes/" + f.h.Server.Node().ID(), "", `{"http_addr":"http://127.0.0.1:1"}`, nil, nil, 401, api.CodeUnauthenticated},
		{"node address with an admin token", "PUT", "/v1/operator/nodes/" + f.h.Server.Node().ID(), admin, `{"http_addr":"http://127.0.0.1:1"}`, nil, nil, 403, api.CodeForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, f.h)
			body := c.raw
			if body == nil {
				body = []byte(c.body)
			}
			r := call(t, f.h.URL, c.method, c.path, c.token, body, c.header)
			if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			if r.body.Error.RequestID == "" || r.body.Error.Message == "" {
				t.Errorf("error body lacks request_id or message: %s", r.raw)
			}
			for _, secret := range []string{admin, worker, join} {
				if bytes.Contains(r.raw, []byte(secret)) {
					t.Errorf("answer echoes a token")
				}
			}
			if after := snapshot(t, f.h); !bytes.Equal(before, after) {
				t.Errorf("refused request changed the state")
			}
		})
	}
}

// TestRouteCredentialMatrix walks the route table: every credential that
// a route does not allow is refused (401 without a credential, 403 with a
// valid credential of another kind or a lesser role). The credentials are
// an admin, a submit and a read client token, a join token, an instance
// token and a worker credential. A public route, GET /v1/openapi.json
// among them, answers a caller with none.
func TestRouteCredentialMatrix(t *testing.T) {
	f := newFixture(t)
	h := f.h
	kinds := []struct {
		name  string
		kind  auth.Kind
		roles []string
		token string
	}{
		{"none", auth.KindNone, nil, ""},
		{"client-admin", auth.KindClient, []string{auth.RoleAdmin}, h.AdminToken},
		{"client-submit", auth.KindClient, []string{auth.RoleSubmit}, mintClient(t, h, "matrix-submit", auth.RoleSubmit)},
		{"client-read", auth.KindClient, []string{auth.RoleRead}, mintClient(t, h, "matrix-read", auth.RoleRead)},
		{"join", auth.KindJoin, nil, h.JoinToken},
		{"instance", auth.KindInstance, nil, mintInstance(t, h, "i-matrix")},
		{"worker", auth.KindWorker, nil, f.workerToken},
	}
	path := strings.NewReplacer("{id}", "x", "{key}", "x", "{kind}", "worker", "{member}", "x", "{sha256}", strings.Repeat("a", 64))
	checked, public := 0, 0
	for _, rt := range h.Server.Routes() {
		for _, k := range kinds {
			if rt.Access.Public() && k.kind == auth.KindNone {
				// A public route (status, the API description, the
				// dashboard, enroll) answers a caller with no credential.
				r := call(t, h.URL, rt.Method, path.Replace(rt.Pattern), "", nil, nil)
				if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
					t.Errorf("public route %s %s refuses a caller without a credential: %d %s", rt.Method, rt.Pattern, r.status, r.raw)
				}
				public++
			}
			if rt.Access.Allows(k.kind, k.roles) {
				continue
			}
			r := call(t, h.URL, rt.Method, path.Replace(rt.Pattern), k.token, []byte(`{}`), nil)
			want, code := http.StatusForbidden, api.CodeForbidden
			if k.kind == auth.KindNone {
				want, code = http.StatusUnauthorized, api.CodeUnauthenticated
			}
			if r.status != want || r.body.Error == nil || r.body.Error.Code != code {
				t.Errorf("%s %s with %s credential: %d %s, want %d %s", rt.Method, rt.Pattern, k.name, r.status, r.raw, want, code)
			}
			checked++
		}
	}
	if checked < 150 || public < 8 {
		t.Fatalf("matrix checked only %d pairs and %d public routes", checked, public)
	}
	t.Logf("%d route × credential pairs refused as expected; %d public routes answer without a credential", checked, public)
}
