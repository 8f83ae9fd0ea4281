package runner

import (
	"os"
	"os/exec"
	"testing"
)

// A process is traced to its attempt through the id in its environment;
// one without it, or gone, to none.
func TestAttemptOfPID(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GPULAYER_ATTEMPT_ID=att-7"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if id, ok := AttemptOfPID(uint32(cmd.Process.Pid)); !ok || id != "att-7" {
		t.Fatalf("task process: %q %v, want att-7", id, ok)
	}
	bare := exec.Command("sleep", "60")
	bare.Env = []string{"PATH=" + os.Getenv("PATH"), "GPULAYER_ATTEMPT_ID="}
	if err := bare.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bare.Process.Kill(); _ = bare.Wait() })
	if id, ok := AttemptOfPID(uint32(bare.Process.Pid)); ok {
		t.Fatalf("process with an empty attempt id: %q", id)
	}
	if id, ok := AttemptOfPID(1 << 30); ok {
		t.Fatalf("no such process: %q", id)
	}
}
