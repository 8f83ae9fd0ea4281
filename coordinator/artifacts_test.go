package coordinator_test

// Artifacts (seed 000's known gap: possession of a digest acted as a
// capability): a worker reads only digests its held tasks list as inputs,
// digests are validated, and an upload that does not hash to its name is
// refused and never stored.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	spec.Inputs = []string{dw}
	spec.Target = &api.Target{Kind: api.TargetWorker, ID: "holder"}
	if _, err := admin.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	task := acquireOne(t, w1)
	if len(task.Inputs) != 1 || task.Inputs[0] != dw {
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

// An artifact's bytes live on the coordinator that received the upload
// (the leader then). After leadership moves, a read is relayed from that
// holder; while no holder is up, the answer says so.
func TestArtifactReadAfterLeaderChange(t *testing.T) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	ctx := t.Context()
	admin := c.Client(c.AdminToken)
	body := []byte("checkpoint-0001")
	d := digest(body)
	if _, err := admin.PutArtifact(ctx, d, body); err != nil {
		t.Fatal(err)
	}
	holder := c.WaitLeader(10 * time.Second)
	c.Converged(10 * time.Second)
	c.Stop(holder)
	var others []string
	for _, n := range c.Nodes {
		if n != holder {
			others = append(others, n.URL)
		}
	}
	survivors, err := client.New(client.Config{Addrs: others, Token: c.AdminToken, MaxRetryWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := survivors.GetArtifact(ctx, d, &buf); !client.IsCode(err, api.CodeNotFound) || !strings.Contains(err.Error(), holder.ID) {
		t.Fatalf("read while the only holder is down: %v, want not_found naming %s", err, holder.ID)
	}
	c.Restart(holder)
	coordinatortest.WaitFor(t, 20*time.Second, "the holder to rejoin", func() bool {
		s := holder.Server()
		return s != nil && s.Store().NodeHTTPAddr(holder.ID) != "" && s.Store().BootstrapGeneration() > 0
	})
	if l := c.WaitLeader(10 * time.Second); l == holder {
		t.Skip("the restarted holder won the election again; nothing to relay")
	}
	buf.Reset()
	coordinatortest.WaitFor(t, 20*time.Second, "the artifact relayed from its holder", func() bool {
		buf.Reset()
		_, err := survivors.GetArtifact(ctx, d, &buf)
		return err == nil
	})
	if !bytes.Equal(buf.Bytes(), body) {
		t.Fatalf("relayed %q", buf.Bytes())
	}
}
