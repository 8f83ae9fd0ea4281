package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// runToEnd runs a until it ends, preempting it once it wrote "up" when
// preempt is set, and returns its finish.
func runToEnd(t *testing.T, r *Runner, rec *recorder, a api.Assignment, preempt bool) api.FinishRequest {
	t.Helper()
	done := make(chan Outcome, 1)
	go func() { done <- r.Run(context.Background(), a) }()
	if preempt {
		waitOutput(t, rec, a.ID, "up")
		r.Preempt(a.AttemptID)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the attempt did not end")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.finishes[a.ID]
}

// A checkpoint round trip: a preempted attempt's checkpoint directory,
// written by the task as it stops, goes up as a tar archive, and the
// next attempt finds it unpacked at the same path, named by
// GPULAYER_CHECKPOINT_DIR.
func TestCheckpointDirectoryRoundTrip(t *testing.T) {
	r, rec, bs := newArtifactRunner(t)
	first := shellTask(t, `trap 'mkdir -p ckpt/sub && echo 41 > ckpt/step && echo deep > ckpt/sub/x; exit 143' TERM; echo up; while :; do sleep 0.1; done`, nil)
	first.Checkpoint = &api.AssignedCheckpoint{Path: "ckpt"}
	first.PreemptionGraceSeconds = 10
	fin := runToEnd(t, r, rec, first, true)
	cp := fin.Checkpoint
	if fin.ExitCode != 143 || cp == nil || cp.Format != api.CheckpointTar {
		t.Fatalf("finish %+v: want exit 143 with a tar checkpoint", fin)
	}
	bs.mu.Lock()
	body := bs.stored[cp.SHA256]
	bs.mu.Unlock()
	if sum(body) != cp.SHA256 || int64(len(body)) != cp.Size {
		t.Fatalf("the uploaded archive (%d bytes) is not the one reported", len(body))
	}
	if names := tarNames(t, body); names != "step,sub/,sub/x" {
		t.Fatalf("archive holds %s", names)
	}
	bs.mu.Lock()
	bs.serve[cp.SHA256] = body
	bs.mu.Unlock()

	next := shellTask(t, `echo "dir=$GPULAYER_CHECKPOINT_DIR"; cat "$GPULAYER_CHECKPOINT_DIR/step" "$GPULAYER_CHECKPOINT_DIR/sub/x"`, nil)
	next.ID = first.ID + "-again"
	next.Checkpoint = &api.AssignedCheckpoint{Path: "ckpt", Latest: &api.TaskCheckpoint{SHA256: cp.SHA256, Size: cp.Size, AttemptID: first.AttemptID, Format: cp.Format}}
	if fin := runToEnd(t, r, rec, next, false); fin.ExitCode != 0 || fin.Checkpoint != nil {
		t.Fatalf("second attempt's finish %+v", fin)
	}
	stdout, _, _ := rec.out(next.ID)
	if !strings.Contains(stdout, "41\ndeep\n") || !strings.Contains(stdout, "dir=/") || !strings.Contains(stdout, filepath.Join(next.AttemptID, "ckpt")) {
		t.Fatalf("the next attempt saw %q", stdout)
	}
}

// A checkpoint file goes up as it is, and only when the attempt did not
// succeed.
func TestCheckpointFileOnlyWhenNotSucceeded(t *testing.T) {
	for _, c := range []struct {
		code int
		want bool
	}{{0, false}, {3, true}} {
		r, rec, bs := newArtifactRunner(t)
		a := shellTask(t, `echo state > model.ckpt; exit $1`, nil, map[int]string{0: "0", 3: "3"}[c.code])
		a.Checkpoint = &api.AssignedCheckpoint{Path: "model.ckpt"}
		fin := runToEnd(t, r, rec, a, false)
		if got := fin.Checkpoint != nil; got != c.want {
			t.Fatalf("exit %d: checkpoint %+v", c.code, fin.Checkpoint)
		}
		if !c.want {
			continue
		}
		bs.mu.Lock()
		stored := string(bs.stored[fin.Checkpoint.SHA256])
		bs.mu.Unlock()
		if fin.Checkpoint.Format != api.CheckpointFile || stored != "state\n" {
			t.Fatalf("exit %d: checkpoint %+v", c.code, fin.Checkpoint)
		}
	}
}

// An archive entry that is not local, or not a file or directory, is
// refused when staged.
func TestCheckpointUnpackRefusesEscapes(t *testing.T) {
	for _, hdr := range []tar.Header{
		{Name: "../escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600},
		{Name: "/abs", Typeflag: tar.TypeReg, Size: 1, Mode: 0o600},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Size > 0 {
			_, _ = tw.Write([]byte("x"))
		}
		_ = tw.Close()
		r, rec, bs := newArtifactRunner(t)
		bs.serve[sum(buf.Bytes())] = buf.Bytes()
		a := shellTask(t, `echo ran`, nil)
		a.Checkpoint = &api.AssignedCheckpoint{Path: "ckpt", Latest: &api.TaskCheckpoint{SHA256: sum(buf.Bytes()), Size: int64(buf.Len()), Format: api.CheckpointTar}}
		runToEnd(t, r, rec, a, false)
		if _, _, ended := rec.out(a.ID); !strings.Contains(ended, "checkpoint") {
			t.Fatalf("entry %q: the attempt ended %q", hdr.Name, ended)
		}
	}
}

func tarNames(t *testing.T, body []byte) string {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(body))
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return strings.Join(names, ",")
}

// countingWriter counts what is written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// Review of 2026-12-07: a task's checkpoint directory holding a sparse
// file larger than an artifact (no blocks on the task's disk) is refused
// before its bytes are written, not streamed into the agent's temporary
// file until the check after it (which a sparse file of terabytes turns
// into a full disk); a tree within the limit is archived whole.
func TestCheckpointTreeStopsAtTheLimit(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ckpt", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ckpt", "sub", "small"), []byte("state"), 0o600); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "ckpt", "zz-big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(64 << 20); err != nil { // sparse: no blocks
		t.Fatal(err)
	}
	big.Close()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var c countingWriter
	err = writeTree(&c, root, "ckpt", 1<<20)
	if !errors.Is(err, errCheckpointTooLarge) {
		t.Fatalf("writeTree of 64 MiB with a 1 MiB limit: %v, want errCheckpointTooLarge", err)
	}
	if c.n > 1<<20 {
		t.Fatalf("%d bytes written past the 1 MiB limit before the refusal", c.n)
	}
	c = countingWriter{}
	if err := writeTree(&c, root, "ckpt", 65<<20); err != nil {
		t.Fatalf("writeTree within the limit: %v", err)
	}
	if c.n < 64<<20 || c.n > 65<<20 {
		t.Fatalf("archive of %d bytes, want the 64 MiB file and its headers", c.n)
	}
}
