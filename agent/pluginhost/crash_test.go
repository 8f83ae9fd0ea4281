package pluginhost_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/sdk/executor"
	"github.com/gpulayer/gpulayer/sdk/executor/executortest"
)

// requireCrash checks that err reports the crash plugin's death.
func requireCrash(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, pluginhost.ErrPluginCrashed) {
		t.Fatalf("%s = %v, want ErrPluginCrashed", what, err)
	}
	var crash *pluginhost.CrashError
	if !errors.As(err, &crash) {
		t.Fatalf("%s = %T, want *CrashError", what, err)
	}
	if want := `executor plugin "crash" exited unexpectedly`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%s message %q, want it to start %q", what, err, want)
	}
}

func TestCrashFailsTaskAndRelaunches(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	e := get(t, h, "crash")
	before, err := e.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A task runs, with Wait and Logs in flight, when the plugin dies.
	victim := executortest.NewTask(t, jsonConfig(map[string]any{}))
	if err := e.Start(ctx, victim); err != nil {
		t.Fatal(err)
	}
	waitErr := make(chan error, 1)
	go func() {
		_, err := e.Wait(ctx, victim.ID)
		waitErr <- err
	}()
	logsErr := make(chan error, 1)
	logging := make(chan struct{})
	go func() {
		var once bool
		logsErr <- e.Logs(ctx, victim.ID, func(executor.LogChunk) error {
			if !once {
				once = true
				close(logging)
			}
			return nil
		})
	}()
	<-logging // the Logs stream is open

	err = e.Start(ctx, executortest.NewTask(t, jsonConfig(map[string]any{"crash": true})))
	requireCrash(t, "Start of the crashing task", err)
	var crash *pluginhost.CrashError
	if errors.As(err, &crash) && crash.Exit != "exit status 3" {
		t.Errorf("CrashError.Exit = %q, want %q", crash.Exit, "exit status 3")
	}
	requireCrash(t, "Wait in flight", <-waitErr)
	requireCrash(t, "Logs in flight", <-logsErr)
	_, err = e.Wait(ctx, victim.ID)
	requireCrash(t, "Wait after the crash", err)

	// The next Get launches a fresh process; the old handle stays dead.
	fresh := get(t, h, "crash")
	after, err := fresh.Info(ctx)
	if err != nil {
		t.Fatalf("Info on relaunched plugin: %v", err)
	}
	if after.Version == before.Version {
		t.Errorf("relaunched plugin has the old pid %s", after.Version)
	}
	if _, err := fresh.Wait(ctx, victim.ID); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("new process knows the old task: %v", err)
	}
	task := executortest.NewTask(t, jsonConfig(map[string]any{}))
	if err := fresh.Start(ctx, task); err != nil {
		t.Fatalf("Start on relaunched plugin: %v", err)
	}
	if err := fresh.Stop(ctx, task.ID, 0); err != nil {
		t.Fatal(err)
	}
	_, err = e.Info(ctx)
	requireCrash(t, "old handle after relaunch", err)
}

func TestCallerCancelIsNotACrash(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	e := get(t, h, "crash")
	task := executortest.NewTask(t, jsonConfig(map[string]any{}))
	if err := e.Start(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := e.Wait(ctx, task.ID)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pluginhost.ErrPluginCrashed) {
		t.Fatalf("Wait past its deadline = %v, want DeadlineExceeded", err)
	}
	if _, err := e.Wait(t.Context(), "no-such"); !errors.Is(err, executor.ErrUnknownTask) {
		t.Errorf("unknown id over the wire = %v", err)
	}
	if err := e.Stop(t.Context(), task.ID, 0); err != nil {
		t.Errorf("plugin unusable after a cancelled call: %v", err)
	}
}

// A plugin that dies of a Go panic says so: the panic's message is in the
// crash error, and from there in the task's reason, instead of only in the
// agent's log.
func TestPluginPanicReachesTheError(t *testing.T) {
	h := newHost(t, buildPlugins(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	e := get(t, h, "crash")
	err := e.Start(ctx, executortest.NewTask(t, jsonConfig(map[string]any{"panic": "model weights not found at /models/llama"})))
	requireCrash(t, "Start of the panicking task", err)
	if !strings.Contains(err.Error(), "panic: model weights not found at /models/llama") {
		t.Fatalf("crash error %q does not carry the panic", err)
	}
}

// countingEvents counts the plugin starts and crashes a host tells of.
type countingEvents struct {
	mu      sync.Mutex
	started map[string]int
	crashed map[string]int
}

func (c *countingEvents) PluginStarted(name string) { c.mu.Lock(); c.started[name]++; c.mu.Unlock() }
func (c *countingEvents) PluginCrashed(name string) { c.mu.Lock(); c.crashed[name]++; c.mu.Unlock() }

func (c *countingEvents) counts(name string) (started, crashed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started[name], c.crashed[name]
}

// The host tells its Events of each launch and of each crash once, however
// many calls see the dead process; a process the host kills is no crash.
func TestEventsCountStartsAndCrashes(t *testing.T) {
	events := &countingEvents{started: map[string]int{}, crashed: map[string]int{}}
	h := newHostWith(t, buildPlugins(t), events)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	e := get(t, h, "crash")
	err := e.Start(ctx, executortest.NewTask(t, jsonConfig(map[string]any{"crash": true})))
	requireCrash(t, "Start of the crashing task", err)
	_, err = e.Info(ctx)
	requireCrash(t, "Info after the crash", err)
	if _, err := get(t, h, "crash").Info(ctx); err != nil {
		t.Fatalf("Info on the relaunched plugin: %v", err)
	}
	get(t, h, "echo")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name             string
		started, crashed int
	}{
		{"crash", 2, 1},
		{"echo", 1, 0},
	} {
		if started, crashed := events.counts(c.name); started != c.started || crashed != c.crashed {
			t.Errorf("%s: %d starts, %d crashes; want %d, %d", c.name, started, crashed, c.started, c.crashed)
		}
	}
}
