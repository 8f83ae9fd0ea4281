//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// holdUIDLocks takes the locks an agent takes on uids base … base+n-1 in
// dir, as another agent on the host would, until the test ends.
func holdUIDLocks(t *testing.T, dir string, base, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for uid := base; uid < base+n; uid++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprint(uid)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
}

// As root, dev whose default task uid range another agent holds takes the
// next free one and says which; given --task-uid-base of a held range it
// fails before it says it runs or writes its env file. Before, it printed
// "running", wrote the env file, then died, with no flag to fix it.
func TestDevTaskUIDRange(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("task uid ranges are a root dev's")
	}
	locks := filepath.Join(t.TempDir(), "task-uids")
	holdUIDLocks(t, locks, 61000, 8)

	t.Run("the default range held: the next one", func(t *testing.T) {
		envFile := filepath.Join(t.TempDir(), "env")
		p := startBinary(t, "dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--log-level", "warn", "--fake-gpus", "dgxh100", "--task-uid-lock-dir", locks)
		env := waitEnvFile(t, p, envFile)
		if out := p.stdout.String(); !strings.Contains(out, "is running") || !strings.Contains(out, "task uids: 61008 … 61015 (61000 … is held") {
			t.Fatalf("dev printed:\n%s", out)
		}
		r := run(t, env, "job", "submit", "--wait", "--", "sh", "-c", "id -u")
		if r.code != 0 || !strings.HasPrefix(r.stdout, "6100") || strings.TrimSpace(r.stdout) < "61008" {
			t.Fatalf("task ran as %q (exit %d, %s)", r.stdout, r.code, r.stderr)
		}
	})

	t.Run("--task-uid-base of a held range: fails, quietly", func(t *testing.T) {
		envFile := filepath.Join(t.TempDir(), "env")
		r := run(t, nil, "dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--log-level", "warn", "--fake-gpus", "dgxh100", "--task-uid-lock-dir", locks, "--task-uid-base", "61004")
		if r.code != 1 || strings.Contains(r.stdout, "running") || !strings.Contains(r.stderr, "held by another agent") {
			t.Fatalf("dev: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(envFile); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("env file written: %v", err)
		}
	})

	// 63000 … is this package's (integration/taskuids_test.go).
	t.Run("--task-uid-base of a free range: that range", func(t *testing.T) {
		envFile := filepath.Join(t.TempDir(), "env")
		p := startBinary(t, "dev", "--http-addr", "127.0.0.1:0", "--env-file", envFile, "--log-level", "warn", "--fake-gpus", "dgxh100", "--task-uid-lock-dir", locks, "--task-uid-base", "63200")
		waitEnvFile(t, p, envFile)
		if out := p.stdout.String(); !strings.Contains(out, "task uids: 63200 … 63207\n") {
			t.Fatalf("dev printed:\n%s", out)
		}
	})
}
