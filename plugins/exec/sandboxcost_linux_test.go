package exec_test

import (
	"os"
	osexec "os/exec"
	"testing"

	"github.com/gpulayer/gpulayer/plugins/exec"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// BenchmarkTrueTask is what one `/bin/true` task costs the executor, start
// to exit, with the task sandbox (PID, mount and IPC namespaces, a
// cgroup, an init) and without it, against a bare fork/exec of
// /bin/true measured in the same run: E1's per-task floor.
func BenchmarkTrueTask(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the sandbox needs root")
	}
	b.Run("fork-exec", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	config := cfg(exec.Config{Command: "/bin/true"})
	for _, bc := range []struct {
		name string
		env  map[string]string
	}{
		{"no-sandbox", map[string]string{executor.EnvSandbox: executor.Sandbox{Disable: true}.Encode()}},
		{"sandbox", nil}, // the executor's default as root
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := exec.New(exec.Options{})
			for b.Loop() {
				task := executortest.NewTask(b, config)
				for k, v := range bc.env {
					task.Env[k] = v
				}
				if err := e.Start(b.Context(), task); err != nil {
					b.Fatal(err)
				}
				res, err := e.Wait(b.Context(), task.ID)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("wait: %+v %v", res, err)
				}
			}
		})
	}
}
