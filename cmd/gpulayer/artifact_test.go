package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Artifacts end to end through the CLI on `gpulayer dev`: put and get,
// a job whose input files are staged where its command reads them and
// whose outputs come back with job outputs --download.
func TestArtifactCommandsAgainstDev(t *testing.T) {
	env := startDev(t)
	dir := t.TempDir()
	data := []byte("alpha,beta\n1,2\n")
	file := filepath.Join(dir, "data.csv")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])

	put := run(t, env, "artifact", "put", file)
	if put.code != 0 || strings.TrimSpace(put.stdout) != want {
		t.Fatalf("artifact put: exit %d, stdout %q, stderr %q; want %s", put.code, put.stdout, put.stderr, want)
	}
	got := filepath.Join(dir, "got.csv")
	if g := run(t, env, "artifact", "get", want, "-o", got); g.code != 0 {
		t.Fatalf("artifact get: exit %d, %s", g.code, g.stderr)
	}
	if b, err := os.ReadFile(got); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("downloaded %q %v", b, err)
	}
	if g := run(t, env, "artifact", "get", "not-a-digest"); g.code != 2 {
		t.Fatalf("artifact get of a bad digest: exit %d, %s", g.code, g.stderr)
	}
	for _, bad := range [][]string{
		{"--input", filepath.Join(dir, "missing")},
		{"--input", file + ":../escape"},
		{"--output", "../*"},
	} {
		args := append(append([]string{"job", "submit"}, bad...), "--", "true")
		if r := run(t, env, args...); r.code != 2 {
			t.Errorf("submit %v: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}

	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, env, "job", "submit", "--input", file+":in/data.csv", "--input", other, "--output", "out/*", "--wait", "--",
		"sh", "-c", `set -e; mkdir out; cat in/data.csv; cp in/data.csv out/copy.csv; cp notes.txt out/`)
	if r.code != 0 || r.stdout != string(data) {
		t.Fatalf("job: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	id := strings.Fields(r.stderr)[1]
	list := run(t, env, "job", "outputs", id)
	if list.code != 0 || !strings.Contains(list.stdout, "out/copy.csv") || !strings.Contains(list.stdout, want) || !strings.Contains(list.stdout, "out/notes.txt") {
		t.Fatalf("job outputs: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
	var rows []outputRow
	if j := run(t, env, "job", "outputs", id, "-o", "json"); json.Unmarshal([]byte(j.stdout), &rows) != nil || len(rows) != 2 {
		t.Fatalf("job outputs -o json: %q", j.stdout)
	}
	into := filepath.Join(dir, "results")
	if d := run(t, env, "job", "outputs", id, "--download", into); d.code != 0 {
		t.Fatalf("job outputs --download: exit %d, %s", d.code, d.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(into, "0", "out", "copy.csv")); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("downloaded output %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(into, "0", "out", "notes.txt")); err != nil || string(b) != "notes\n" {
		t.Fatalf("downloaded output %q %v", b, err)
	}
}
