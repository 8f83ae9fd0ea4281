//go:build unix

package plugins

import (
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

type countingKiller struct{ n atomic.Int32 }

func (k *countingKiller) KillAll() { k.n.Add(1) }

// SIGTERM, which the agent makes a plugin's parent-death signal, kills the
// executor's tasks before the process exits.
func TestSIGTERMKillsTasksThenExits(t *testing.T) {
	k := &countingKiller{}
	exited := make(chan struct{})
	stop := killOnSIGTERM(k, func() { close(exited) })
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("SIGTERM did not end the plugin")
	}
	if got := k.n.Load(); got != 1 {
		t.Fatalf("KillAll ran %d times before the exit, want once", got)
	}
}

// The built-in exec executor is one the handler can kill.
func TestBuiltinsCanKillTheirTasks(t *testing.T) {
	for _, name := range Names() {
		e, _ := Lookup(name)
		if _, ok := e.(killer); !ok {
			t.Errorf("built-in %q has no KillAll: its tasks would outlive a dead agent", name)
		}
	}
}
