package runner

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// killAttempt kills the processes that carry the attempt's id in their
// environment, in whatever process group or session, and only those: an
// id that merely starts the same is another attempt's.
func TestKillAttemptByEnvironment(t *testing.T) {
	start := func(attempt string) *exec.Cmd {
		cmd := exec.Command("sleep", "120")
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GPULAYER_ATTEMPT_ID=" + attempt, "OTHER=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // as a task's daemon would
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	victim, bystander := start("att-1"), start("att-10")
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()

	if err := killAttempt("att-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the attempt's process survived killAttempt")
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("another attempt's process was killed: %v", err)
	}
}
