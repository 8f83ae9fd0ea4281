package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The attack surface without root: tasks would run as the agent's user
// and read its credential. Such an agent refuses to start unless told to
// accept shared-user tasks, and says why; root gets a uid per slot or the
// configured user, never root itself.
func TestPlanTaskUsers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cfg     Config
		euid    int
		want    string // describe(4), or the error's text
		wantErr error
	}{
		{"non-root refuses", Config{DataDir: "/d"}, 1000, "--allow-shared-user-tasks", ErrSharedUserTasks},
		{"non-root with the flag", Config{AllowSharedUserTasks: true}, 1000, "agent's own user", nil},
		{"non-root cannot switch", Config{TaskUser: "nobody", AllowSharedUserTasks: true}, 1000, "needs the agent to run as root", nil},
		{"root default range", Config{}, 0, "61000 … 61003", nil},
		{"root custom range", Config{TaskUIDBase: 70000}, 0, "70000 … 70003", nil},
		{"root numeric user", Config{TaskUser: "65000"}, 0, "uid 65000, gid 65000", nil},
		{"root never root", Config{TaskUser: "0"}, 0, "never run as root", nil},
		{"root unknown user", Config{TaskUser: "no-such-user-gpulayer"}, 0, "no-such-user-gpulayer", nil},
		{"root range overflows", Config{TaskUIDBase: 4294967000}, 0, "out of range", nil},
		// MPS serves one uid at a time: shares need one task user.
		{"root MPS with a uid per slot", Config{MPSPipeDir: "/tmp/nvidia-mps"}, 0, "--task-user", ErrMPSNeedsOneTaskUser},
		{"root MPS with one task user", Config{MPSPipeDir: "/tmp/nvidia-mps", TaskUser: "65000"}, 0, "uid 65000, gid 65000", nil},
		{"non-root MPS", Config{MPSPipeDir: "/tmp/nvidia-mps", AllowSharedUserTasks: true}, 1000, "agent's own user", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planTaskUsers(tc.cfg, tc.euid)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				got = p.describe(4)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want it to mention %q", got, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// A data dir that pre-existed with loose modes is tightened: 0700, and the
// credential 0600, so tasks (other uids) cannot read it.
func TestSecureDataDirTightensModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cred := filepath.Join(dir, CredentialFile)
	if err := os.WriteFile(cred, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(cred, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := secureDataDir(dir); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, cred: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s is %04o, want %04o", path, got, want)
		}
	}
}

func TestPrepareWorkRoot(t *testing.T) {
	// Default: a fresh directory under TMPDIR, 0711, removed by cleanup.
	t.Setenv("TMPDIR", t.TempDir())
	if err := os.Chmod(os.Getenv("TMPDIR"), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(os.Getenv("TMPDIR")), 0o711); err != nil {
		t.Fatal(err)
	}
	root, cleanup, err := prepareWorkRoot("", true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(root); err != nil || fi.Mode().Perm() != 0o711 {
		t.Fatalf("work root %s: %v %v", root, fi, err)
	}
	cleanup()
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("default work root not removed: %v", err)
	}

	// A root behind a directory others may not search is refused when
	// tasks switch users (they could not reach their directories), and
	// fine when they do not.
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := prepareWorkRoot(filepath.Join(closed, "work"), true); !errors.Is(err, errUnsafeDir) || !strings.Contains(err.Error(), "o+x") {
		t.Errorf("work root under a 0700 dir: %v, want errUnsafeDir naming o+x", err)
	}
	if _, _, err := prepareWorkRoot(filepath.Join(closed, "work2"), false); err != nil {
		t.Errorf("shared-user work root under a 0700 dir: %v", err)
	}
}
