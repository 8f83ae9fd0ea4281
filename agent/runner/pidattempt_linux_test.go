package runner

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// startWithEnv starts sleep with env and waits until its environment is
// readable: the kernel lays it out after exec has been reported done.
func startWithEnv(t *testing.T, env ...string) uint32 {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	path := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ"
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return uint32(cmd.Process.Pid)
		}
		if time.Now().After(deadline) {
			t.Fatal("the process's environment never became readable")
		}
		<-tick.C
	}
}

// A process is traced to its attempt through the id in its environment;
// one without it, or gone, to none.
func TestAttemptOfPID(t *testing.T) {
	if id, ok := AttemptOfPID(startWithEnv(t, "GPULAYER_ATTEMPT_ID=att-7")); !ok || id != "att-7" {
		t.Fatalf("task process: %q %v, want att-7", id, ok)
	}
	if id, ok := AttemptOfPID(startWithEnv(t, "GPULAYER_ATTEMPT_ID=")); ok {
		t.Fatalf("process with an empty attempt id: %q", id)
	}
	if id, ok := AttemptOfPID(startWithEnv(t)); ok {
		t.Fatalf("process without an attempt id: %q", id)
	}
	if id, ok := AttemptOfPID(1 << 30); ok {
		t.Fatalf("no such process: %q", id)
	}
}

// A live process's uids are read from its status, whatever its
// environment says; a process that is gone has none.
func TestProcessUIDs(t *testing.T) {
	me := uint32(os.Getuid())
	if uids, ok := ProcessUIDs(startWithEnv(t)); !ok || uids[0] != me {
		t.Fatalf("uids %v %v, want the real uid %d", uids, ok, me)
	}
	if uids, ok := ProcessUIDs(1 << 30); ok {
		t.Fatalf("no such process: uids %v", uids)
	}
}
