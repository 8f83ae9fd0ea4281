package exec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// A root without CAP_SYS_ADMIN (a container's, say) cannot build the
// sandbox: the executor learns it from the effective capability set.
func TestHasCapability(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         bool
	}{
		{"full root", "Name:\tx\nCapEff:\t000001ffffffffff\n", true},
		{"a container's default set", "CapEff:\t00000000a80425fb\n", false},
		{"only CAP_SYS_ADMIN", "CapEff:\t0000000000200000\n", true},
		{"no line", "Name:\tx\n", false},
		{"garbage", "CapEff:\tzz\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasCapability([]byte(tc.status), capSysAdmin); got != tc.want {
				t.Fatalf("hasCapability = %v, want %v", got, tc.want)
			}
		})
	}
}

// A root executor without CAP_SYS_ADMIN (a container's default root)
// fails each task, naming the capability, and never runs its command
// without the sandbox it promised; only the operator's explicit word
// (Options.DisableSandbox, --no-task-sandbox; or the agent's, for the
// task) runs it without one.
func TestSandboxRefusedWithoutCapSysAdmin(t *testing.T) {
	const containerRoot = "Name:\tgpulayer\nCapEff:\t00000000a80425fb\n" // Docker's default set
	for _, tc := range []struct {
		name    string
		status  func() ([]byte, error)
		opts    Options
		sandbox *executor.Sandbox
		wantErr string // "": the task runs
	}{
		{"container root", func() ([]byte, error) { return []byte(containerRoot), nil }, Options{}, nil, "root without CAP_SYS_ADMIN (a container without it?), so it cannot build the task's sandbox; give it CAP_SYS_ADMIN, or run the agent with --no-task-sandbox"},
		{"capabilities unknown", func() ([]byte, error) { return nil, fs.ErrPermission }, Options{}, nil, "cannot read /proc/self/status"},
		{"sandbox disabled by the operator", func() ([]byte, error) { return []byte(containerRoot), nil }, Options{DisableSandbox: true}, nil, ""},
		{"sandbox disabled for the task", func() ([]byte, error) { return []byte(containerRoot), nil }, Options{}, &executor.Sandbox{Disable: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldEuid, oldStatus := geteuid, procStatus
			geteuid, procStatus = func() int { return 0 }, tc.status
			t.Cleanup(func() { geteuid, procStatus = oldEuid, oldStatus })

			marker := filepath.Join(t.TempDir(), "ran")
			task := executortest.NewTask(t, []byte(`{"command": "sh", "args": ["-c", "touch \"$1\"", "sh", `+strconv.Quote(marker)+`]}`))
			if tc.sandbox != nil {
				task.Env[executor.EnvSandbox] = tc.sandbox.Encode()
			}
			e := New(tc.opts)
			err := e.Start(t.Context(), task)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrSandbox) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Start = %v, want ErrSandbox saying %q", err, tc.wantErr)
				}
				if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the command ran anyway (%v)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if res, err := e.Wait(t.Context(), task.ID); err != nil || res.ExitCode != 0 {
				t.Fatalf("Wait = %+v, %v", res, err)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the command did not run: %v", err)
			}
		})
	}
}
