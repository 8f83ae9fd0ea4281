package coordinator_test

// Artifacts (seed 000's known gap: possession of a digest acted as a
// capability): a worker reads only digests its held tasks list as inputs,
// digests are validated, and an upload that does not hash to its name is
// refused and never stored.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestArtifactsAreScopedToHeldTasks(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	submitter := h.Client(t, mintClient(t, h, "uploader", "submit"))
	readTok := mintClient(t, h, "auditor", "read")
	weights := []byte("weights v1")
	other := []byte("someone else's data")
	dw, do := digest(weights), digest(other)

	a, err := submitter.PutArtifact(ctx, dw, weights)
	if err != nil || a.SHA256 != dw || a.Size != int64(len(weights)) || a.UploadedBy != "uploader" {
		t.Fatalf("upload: %+v %v", a, err)
	}
	if _, err := submitter.PutArtifact(ctx, do, other); err != nil {
		t.Fatal(err)
	}
	if a2, err := submitter.PutArtifact(ctx, dw, weights); err != nil || a2.SHA256 != dw {
		t.Fatalf("uploading the same bytes again: %+v %v", a2, err)
	}

	// Refused uploads store nothing.
	bogus := digest([]byte("what the name claims"))
	wantCode(t, "body does not hash to its name", call(t, h.URL, "PUT", "/v1/artifacts/"+bogus, mintClient(t, h, "u2", "submit"), []byte("something else"), nil), 400, api.CodeInvalidArgument)
	if _, ok := h.Server.Store().Artifact(bogus); ok {
		t.Fatal("a mismatched upload was recorded")
	}
	if _, err := os.Stat(filepath.Join(h.DataDir, "artifacts", bogus[:2], bogus)); err == nil {
		t.Fatal("a mismatched upload was stored on disk")
	}
	for _, name := range []string{"abc", strings.ToUpper(dw), dw + "0", "../../etc/passwd"} {
		r := call(t, h.URL, "PUT", "/v1/artifacts/"+name, h.AdminToken, weights, nil)
		if r.status != 400 && r.status != 404 {
			t.Errorf("upload under %q: %d %s", name, r.status, r.raw)
		}
	}
	wantCode(t, "read role uploads", call(t, h.URL, "PUT", "/v1/artifacts/"+dw, readTok, weights, nil), 403, api.CodeForbidden)

	// Clients with the read role read any artifact.
	var buf bytes.Buffer
	if _, err := h.Client(t, readTok).GetArtifact(ctx, dw, &buf); err != nil || !bytes.Equal(buf.Bytes(), weights) {
		t.Fatalf("read role reads: %q %v", buf.Bytes(), err)
	}

	// Workers read only the inputs of tasks they hold.
	tok1, w1 := enroll(t, h, "holder")
	tok2, w2 := enroll(t, h, "bystander")
	spec := execJob()
	spec.Inputs = []api.ArtifactRef{{SHA256: dw}}
	spec.Target = &api.Target{Kind: api.TargetWorker, ID: "holder"}
	if _, err := admin.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, w1)
	if len(task.Inputs) != 1 || task.Inputs[0].SHA256 != dw || task.Inputs[0].StagePath() != "inputs/"+dw {
		t.Fatalf("assignment inputs %v", task.Inputs)
	}
	buf.Reset()
	if _, err := w1.GetArtifact(ctx, dw, &buf); err != nil || !bytes.Equal(buf.Bytes(), weights) {
		t.Fatalf("holder reads its input: %v", err)
	}
	wantCode(t, "holder reads a digest its task does not list", call(t, h.URL, "GET", "/v1/artifacts/"+do, tok1, nil, nil), 404, api.CodeNotFound)
	wantCode(t, "a worker without a referencing task", call(t, h.URL, "GET", "/v1/artifacts/"+dw, tok2, nil, nil), 404, api.CodeNotFound)
	wantCode(t, "unknown digest", call(t, h.URL, "GET", "/v1/artifacts/"+digest([]byte("nothing")), h.AdminToken, nil, nil), 404, api.CodeNotFound)
	wantCode(t, "bad digest", call(t, h.URL, "GET", "/v1/artifacts/not-a-digest", h.AdminToken, nil, nil), 400, api.CodeInvalidArgument)
	if _, err := w1.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "after its task ended", call(t, h.URL, "GET", "/v1/artifacts/"+dw, tok1, nil, nil), 404, api.CodeNotFound)
	_ = w2
}

// An acknowledged artifact is on two coordinators: the one that received
// the upload (the leader) and one more. Losing the receiver loses
// nothing: the survivors serve it.
func TestArtifactSurvivesTheLossOfItsReceiver(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	ctx := t.Context()
	receiver := c.WaitLeader(10 * time.Second)
	admin := c.Client(c.AdminToken)
	body := []byte("checkpoint-0001")
	d := digest(body)
	a, err := admin.PutArtifact(ctx, d, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Holders) != 2 || !slices.Contains(a.Holders, receiver.ID) {
		t.Fatalf("acknowledged with holders %v, want the receiver %s and one more", a.Holders, receiver.ID)
	}
	for _, n := range c.Nodes {
		_, err := os.Stat(filepath.Join(n.DataDir, "artifacts", d[:2], d))
		if held := slices.Contains(a.Holders, n.ID); held != (err == nil) {
			t.Fatalf("node %s: listed as holder %v, file there: %v", n.ID, held, err)
		}
	}
	c.Converged(10 * time.Second)
	c.Stop(receiver)
	var others []string
	for _, n := range c.Nodes {
		if n != receiver {
			others = append(others, n.URL)
		}
	}
	survivors, err := client.New(client.Config{Addrs: others, Token: c.AdminToken, MaxRetryWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	coordinatortest.WaitFor(t, 20*time.Second, "the survivors to serve the artifact", func() bool {
		buf.Reset()
		_, err := survivors.GetArtifact(ctx, d, &buf)
		return err == nil
	})
	if !bytes.Equal(buf.Bytes(), body) {
		t.Fatalf("survivors served %q", buf.Bytes())
	}
}

// An upload no second coordinator can take a copy of is refused (503
// no_leader, saying why) and recorded nowhere: its acknowledgement would promise a
// copy that does not exist. Here no coordinator trusts the others as
// proxies, so none honours the leader's copy request.
func TestArtifactWithoutASecondCopyIsRefused(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	ctx := t.Context()
	leader := c.WaitLeader(10 * time.Second)
	// The followers' disks fail: where their blob store keeps its files
	// is no longer a directory, so neither can store a copy.
	for _, n := range c.Nodes {
		if n == leader {
			continue
		}
		dir := filepath.Join(n.DataDir, "artifacts")
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	body := []byte("one copy only")
	d := digest(body)
	var urls []string
	for _, n := range c.Nodes {
		urls = append(urls, n.URL)
	}
	impatient, err := client.New(client.Config{Addrs: urls, Token: c.AdminToken, MaxRetryWait: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = impatient.PutArtifact(ctx, d, body)
	if !client.IsCode(err, api.CodeNoLeader) || !strings.Contains(err.Error(), "no other coordinator could take a copy") {
		t.Fatalf("upload: %v, want no_leader", err)
	}
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Status != 503 {
		t.Fatalf("answer %+v, want HTTP 503", ae)
	}
	if _, ok := leader.Server().Store().Artifact(d); ok {
		t.Fatal("a refused upload was recorded")
	}
}

// A worker uploads only while it holds a task whose job declares
// outputs, and a finish lists only artifacts that were uploaded.
func TestWorkerUploadsOnlyItsTasksOutputs(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	tok, w := enroll(t, h, "maker")
	out := []byte("model weights")
	d := digest(out)
	wantCode(t, "upload without a task", call(t, h.URL, "PUT", "/v1/artifacts/"+d, tok, out, nil), 403, api.CodeForbidden)

	plain := execJob()
	plain.Target = &api.Target{Kind: api.TargetWorker, ID: "maker"}
	if _, err := admin.SubmitJob(ctx, plain); err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, w)
	wantCode(t, "upload for a job without outputs", call(t, h.URL, "PUT", "/v1/artifacts/"+d, tok, out, nil), 403, api.CodeForbidden)
	if _, err := w.Finish(ctx, task.ID, api.FinishRequest{AttemptID: task.AttemptID}); err != nil {
		t.Fatal(err)
	}

	spec := execJob()
	spec.Target = plain.Target
	spec.Outputs = []string{"out/*"}
	if _, err := admin.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	task = acquireOne(t, w)
	if len(task.Outputs) != 1 || task.Outputs[0] != "out/*" {
		t.Fatalf("assignment outputs %v", task.Outputs)
	}
	fin := api.FinishRequest{AttemptID: task.AttemptID, Artifacts: []api.TaskArtifact{{Path: "out/w.bin", SHA256: d, Size: int64(len(out))}}}
	if _, err := w.Finish(ctx, task.ID, fin); !client.IsCode(err, api.CodeInvalidArgument) || !strings.Contains(err.Error(), d) {
		t.Fatalf("finish naming an artifact not uploaded: %v, want invalid_argument naming it", err)
	}
	if a, err := w.PutArtifact(ctx, d, out); err != nil || a.UploadedBy == "" {
		t.Fatalf("upload of an output: %+v %v", a, err)
	}
	done, err := w.Finish(ctx, task.ID, fin)
	if err != nil {
		t.Fatal(err)
	}
	if done.State != api.TaskSucceeded || len(done.Artifacts) != 1 || done.Artifacts[0] != fin.Artifacts[0] {
		t.Fatalf("finished task %+v", done)
	}
	job, err := admin.Job(ctx, task.JobID)
	if err != nil || len(job.Tasks) != 1 || len(job.Tasks[0].Artifacts) != 1 || job.Tasks[0].Artifacts[0].Path != "out/w.bin" {
		t.Fatalf("job lists %+v %v", job.Tasks, err)
	}
	wantCode(t, "upload once the task ended", call(t, h.URL, "PUT", "/v1/artifacts/"+d, tok, out, nil), 403, api.CodeForbidden)
}

// Garbage collection removes an artifact with the last job that names it,
// and each coordinator then removes the bytes from its own disk.
func TestArtifactsAreRemovedWithTheirJobs(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: func(cfg *coordinator.Config) {
		// The grace covers the moment between a blob written to a
		// node's disk and the record naming that node as its holder
		// applied there: with none, a sweep in that moment took the
		// bytes of a live artifact (seen once in CI).
		cfg.Retention = coordinator.Retention{Threshold: time.Hour, Interval: 100 * time.Millisecond, ArtifactGrace: 2 * time.Second}
	}})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	in := []byte("an input")
	d := digest(in)
	a, err := admin.PutArtifact(ctx, d, in)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := c.Client(c.JoinToken).Register(ctx, api.RegisterRequest{WorkerID: "w", Capabilities: []string{"*"}, Executors: []string{"exec"}})
	if err != nil {
		t.Fatal(err)
	}
	worker := c.Client(reg.WorkerToken)
	job, err := admin.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Inputs: []api.ArtifactRef{{SHA256: d, Path: "data/in"}}})
	if err != nil {
		t.Fatal(err)
	}
	zero := time.Duration(0)
	if _, err := admin.CollectGarbage(ctx, &zero); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Job(ctx, job.ID); err != nil {
		t.Fatalf("a pending job was collected: %v", err)
	}
	var buf bytes.Buffer
	if _, err := admin.GetArtifact(ctx, d, &buf); err != nil {
		t.Fatalf("the input of a pending job was collected: %v", err)
	}
	acq, err := worker.Acquire(ctx, api.AcquireRequest{WaitSeconds: 5})
	if err != nil || acq.Task == nil {
		t.Fatalf("acquire: %+v %v", acq, err)
	}
	if _, err := worker.Finish(ctx, acq.Task.ID, api.FinishRequest{AttemptID: acq.Task.AttemptID}); err != nil {
		t.Fatal(err)
	}
	if n, err := admin.CollectGarbage(ctx, &zero); err != nil || n != 1 {
		t.Fatalf("gc: %d %v", n, err)
	}
	if _, err := admin.GetArtifact(ctx, d, &buf); !client.IsCode(err, api.CodeNotFound) {
		t.Fatalf("artifact of a collected job: %v, want not_found", err)
	}
	coordinatortest.WaitFor(t, 20*time.Second, "every holder to remove the bytes from its disk", func() bool {
		for _, n := range c.Nodes {
			if _, err := os.Stat(filepath.Join(n.DataDir, "artifacts", d[:2], d)); err == nil {
				return false
			}
		}
		return true
	})
	if len(a.Holders) != 2 {
		t.Fatalf("holders %v", a.Holders)
	}
}
