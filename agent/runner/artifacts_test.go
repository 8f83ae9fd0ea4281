package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// blobServer is a coordinator's artifact routes, in memory: it serves
// what serve holds under a digest (tampered bytes included: the agent must
// notice), stores uploads that hash to their name, and refuses every
// upload while refusePuts is set.
type blobServer struct {
	mu         sync.Mutex
	serve      map[string][]byte
	stored     map[string][]byte
	refusePuts bool
}

func (b *blobServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := strings.TrimPrefix(r.URL.Path, "/v1/artifacts/")
	b.mu.Lock()
	defer b.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		body, ok := b.serve[d]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: &api.Error{Code: api.CodeNotFound, Message: "no artifact " + d}})
			return
		}
		_, _ = w.Write(body)
	case http.MethodPut:
		body, _ := io.ReadAll(r.Body)
		if b.refusePuts || sum(body) != d {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: &api.Error{Code: api.CodeInvalidArgument, Message: "refused"}})
			return
		}
		b.stored[d] = body
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(api.ArtifactResponse{Artifact: api.Artifact{SHA256: d, Size: int64(len(body))}})
	}
}

func newArtifactRunner(t *testing.T) (*Runner, *recorder, *blobServer) {
	t.Helper()
	bs := &blobServer{serve: map[string][]byte{}, stored: map[string][]byte{}}
	srv := httptest.NewServer(bs)
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{Addrs: []string{srv.URL}, MaxRetryWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	r := New(Config{Host: inProcess{exec.New(exec.Options{})}, Coordinator: rec, Artifacts: c, WorkRoot: searchableRoot(t), StopGrace: time.Second})
	return r, rec, bs
}

// Inputs are staged at their paths before the process starts (a bare
// digest under inputs/), and the files the output globs match are
// uploaded once it ended and listed in the finish: a directory's files,
// never a symbolic link, nor anything reached through one.
func TestInputsAreStagedAndOutputsUploaded(t *testing.T) {
	r, rec, bs := newArtifactRunner(t)
	data, weights := []byte("a,b\n1,2\n"), []byte("weights")
	bs.serve[sum(data)], bs.serve[sum(weights)] = data, weights
	a := shellTask(t, `set -e
mkdir -p out/sub
cat data/train.csv > out/copy.csv
cat "inputs/$1" > out/sub/weights
ln -s /etc/passwd out/leak
ln -s .. out/up
echo not an output > notes.txt`, nil, sum(weights))
	a.Inputs = []api.ArtifactRef{{SHA256: sum(data), Path: "data/train.csv"}, {SHA256: sum(weights)}}
	a.Outputs = []string{"out/*", "missing/*"}
	out := r.Run(t.Context(), a)
	if out.Failed || out.ExitCode != 0 {
		t.Fatalf("outcome %+v", out)
	}
	fin := rec.finishes[a.ID]
	want := []api.TaskArtifact{
		{Path: "out/copy.csv", SHA256: sum(data), Size: int64(len(data))},
		{Path: "out/sub/weights", SHA256: sum(weights), Size: int64(len(weights))},
	}
	if len(fin.Artifacts) != len(want) || fin.Artifacts[0] != want[0] || fin.Artifacts[1] != want[1] || fin.Reason != "" {
		t.Fatalf("finish %+v, want artifacts %+v", fin, want)
	}
	if !bytes.Equal(bs.stored[sum(data)], data) || len(bs.stored) != 2 {
		t.Fatalf("uploaded %d artifacts", len(bs.stored))
	}
}

// Bytes that do not hash to the input's digest fail the attempt (to be
// retried) with a reason naming the digest; the process never starts.
func TestTamperedInputFailsNamingTheDigest(t *testing.T) {
	r, rec, bs := newArtifactRunner(t)
	good := []byte("the real dataset")
	bs.serve[sum(good)] = []byte("something else")
	marker := filepath.Join(t.TempDir(), "ran")
	a := shellTask(t, `touch "$1"`, nil, marker)
	a.Inputs = []api.ArtifactRef{{SHA256: sum(good), Path: "data.bin"}}
	out := r.Run(t.Context(), a)
	_, _, ended := rec.out(a.ID)
	if !out.Failed || !strings.Contains(ended, sum(good)) || !strings.Contains(ended, "does not match its digest") {
		t.Fatalf("outcome %+v, reported %q; want a fail naming %s", out, ended, sum(good))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the task ran with a tampered input")
	}
}

// Staging refuses what the coordinator would have refused at submit, and
// a directory on the way that is a link out of the task's directory.
func TestStagingStaysInsideTheTaskDirectory(t *testing.T) {
	r, _, bs := newArtifactRunner(t)
	body := []byte("x")
	bs.serve[sum(body)] = body
	outside := t.TempDir()
	cases := []struct {
		name  string
		path  string
		plant func(dir string)
	}{
		{"climbs out", "../escape", nil},
		{"absolute", "/tmp/escape", nil},
		{"through a planted link", "data/x", func(dir string) {
			if err := os.Symlink(outside, filepath.Join(dir, "data")); err != nil {
				t.Fatal(err)
			}
		}},
		{"over a planted link", "x", func(dir string) {
			if err := os.Symlink(filepath.Join(outside, "x"), filepath.Join(dir, "x")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.plant != nil {
				c.plant(dir)
			}
			a := api.Assignment{ID: "t", AttemptID: "a", Inputs: []api.ArtifactRef{{SHA256: sum(body), Path: c.path}}}
			if err := r.stageInputs(t.Context(), a, dir, User{}); err == nil {
				t.Fatal("staged")
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Fatalf("wrote outside the task's directory: %v", entries)
			}
		})
	}
}

// An output that cannot be uploaded does not lose the task's result: the
// finish reports its exit code, and its reason names the output.
func TestOutputUploadFailureKeepsTheExitCode(t *testing.T) {
	cases := []struct {
		name, script, reason string
		refuse               bool
	}{
		{"refused by the coordinator", `echo result > res.txt; exit 3`, "output res.txt could not be uploaded", true},
		// A sparse file: over the 2 GiB an artifact holds, without the disk.
		{"over the artifact cap", `truncate -s 3G res.txt; exit 3`, "an artifact holds at most", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, rec, bs := newArtifactRunner(t)
			bs.refusePuts = c.refuse
			a := shellTask(t, c.script, nil)
			a.Outputs = []string{"res.txt"}
			out := r.Run(t.Context(), a)
			fin := rec.finishes[a.ID]
			if out.Failed || out.ExitCode != 3 || fin.ExitCode != 3 || len(fin.Artifacts) != 0 || !strings.Contains(fin.Reason, c.reason) {
				t.Fatalf("outcome %+v, finish %+v; want exit 3 with a reason containing %q", out, fin, c.reason)
			}
		})
	}
}

func TestMatchOutputsIsBounded(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "many"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range api.MaxOutputFiles + 5 {
		if err := os.WriteFile(filepath.Join(dir, "many", fmt.Sprintf("f%04d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files, problems := matchOutputs(os.DirFS(dir), []string{"many"})
	if len(files) != api.MaxOutputFiles || len(problems) != 1 || !strings.Contains(problems[0], "more than") {
		t.Fatalf("%d files, problems %v", len(files), problems)
	}
}
