package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A job's input is staged where its command reads it, on a real agent
// with the exec executor; the outputs its globs match are uploaded and
// listed on the task, and come back byte for byte. An input whose bytes
// on the coordinator no longer match its digest fails the attempt, with a
// reason naming the digest, and the task never runs.
func TestArtifactsEndToEnd(t *testing.T) {
	h := startCoordinator(t)
	admin := h.Client(t, h.AdminToken)
	startAgent(t, h.URL, h.JoinToken, "node-a", "dgxh100")
	ctx := t.Context()

	input := []byte("the dataset\n")
	if _, err := admin.PutArtifact(ctx, sha(input), input); err != nil {
		t.Fatal(err)
	}
	spec := execSpec(`set -e
test "$(cat data/in.txt)" = "the dataset"
mkdir -p out/deep
tr a-z A-Z < data/in.txt > out/upper.txt
printf 'metrics' > out/deep/metrics.json
ln -s /etc/passwd out/leak`, 0)
	spec.Inputs = []api.ArtifactRef{{SHA256: sha(input), Path: "data/in.txt"}}
	spec.Outputs = []string{"out"}
	job, err := admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	done := waitJob(t, admin, job.ID, terminal, "the job to end")
	if done.State != api.TaskSucceeded {
		t.Fatalf("job %s: %+v\n%s", done.State, done.Tasks, logsOf(t, admin, job.ID))
	}
	want := map[string][]byte{"out/upper.txt": []byte("THE DATASET\n"), "out/deep/metrics.json": []byte("metrics")}
	arts := done.Tasks[0].Artifacts
	if len(arts) != len(want) {
		t.Fatalf("task lists %+v, want %d outputs (never the link)", arts, len(want))
	}
	for _, a := range arts {
		body, ok := want[a.Path]
		if !ok || a.SHA256 != sha(body) || a.Size != int64(len(body)) {
			t.Fatalf("output %+v unexpected", a)
		}
		var buf bytes.Buffer
		if _, err := admin.GetArtifact(ctx, a.SHA256, &buf); err != nil || !bytes.Equal(buf.Bytes(), body) {
			t.Fatalf("downloading %s: %q %v", a.Path, buf.Bytes(), err)
		}
	}

	// Tamper with the stored bytes of a second input on the coordinator's
	// disk: it serves them, and the agent refuses them.
	other := []byte("weights v2")
	d := sha(other)
	if _, err := admin.PutArtifact(ctx, d, other); err != nil {
		t.Fatal(err)
	}
	blobPath := filepath.Join(h.DataDir, "artifacts", d[:2], d)
	if err := os.WriteFile(blobPath, []byte("weights v3"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec = execSpec(`echo started`, 0)
	spec.Inputs = []api.ArtifactRef{{SHA256: d}}
	spec.MaxAttempts = 1
	job, err = admin.SubmitJob(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	done = waitJob(t, admin, job.ID, terminal, "the job with a tampered input to end")
	task := done.Tasks[0]
	if done.State != api.TaskFailed || !strings.Contains(task.Reason, d) || !strings.Contains(task.Reason, "does not match its digest") {
		t.Fatalf("job %s, task reason %q; want failed naming %s", done.State, task.Reason, d)
	}
	if out := logsOf(t, admin, job.ID); strings.Contains(out, "started") {
		t.Fatal("the task ran with a tampered input")
	}
}
