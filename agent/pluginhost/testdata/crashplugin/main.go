// Command crashplugin is a test executor plugin that dies on request: a
// task whose config is {"crash": true} makes the whole plugin process
// exit with status 3 during Start, {"panic": "MSG"} panics with MSG there,
// and {"crash_running": true} makes it exit
// once the task has started and its first line was delivered. Other tasks
// run until stopped.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

type config struct {
	Crash        bool   `json:"crash"`
	CrashRunning bool   `json:"crash_running"`
	Panic        string `json:"panic"`
}

type crasher struct {
	mu    sync.Mutex
	tasks map[string]chan struct{} // closed when the task ends
	doom  map[string]bool          // tasks that crash the plugin while running
}

func (c *crasher) Info(context.Context) (executor.Info, error) {
	return executor.Info{Name: "crash", Version: fmt.Sprint(os.Getpid())}, nil
}

func (c *crasher) Start(_ context.Context, t executor.Task) error {
	var cfg config
	if err := json.Unmarshal(t.Config, &cfg); err != nil {
		return fmt.Errorf("%w: %v", executor.ErrInvalidConfig, err)
	}
	if cfg.Crash {
		os.Exit(3)
	}
	if cfg.Panic != "" {
		panic(cfg.Panic)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.tasks[t.ID]; ok {
		return executor.ErrDuplicateTask
	}
	c.tasks[t.ID] = make(chan struct{})
	c.doom[t.ID] = cfg.CrashRunning
	return nil
}

func (c *crasher) task(id string) (chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	done, ok := c.tasks[id]
	if !ok {
		return nil, executor.ErrUnknownTask
	}
	return done, nil
}

func (c *crasher) Wait(ctx context.Context, id string) (executor.Result, error) {
	done, err := c.task(id)
	if err != nil {
		return executor.Result{}, err
	}
	select {
	case <-done:
		return executor.Result{ExitCode: 143, Reason: "stopped"}, nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

func (c *crasher) Stop(_ context.Context, id string, _ time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	done, ok := c.tasks[id]
	if !ok {
		return executor.ErrUnknownTask
	}
	select {
	case <-done:
	default:
		close(done)
	}
	return nil
}

func (c *crasher) Logs(ctx context.Context, id string, send func(executor.LogChunk) error) error {
	done, err := c.task(id)
	if err != nil {
		return err
	}
	if err := send(executor.LogChunk{Stream: "stdout", Data: []byte("running\n")}); err != nil {
		return err
	}
	c.mu.Lock()
	doomed := c.doom[id]
	c.mu.Unlock()
	if doomed {
		os.Exit(3)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func main() {
	executor.Serve(&crasher{tasks: make(map[string]chan struct{}), doom: make(map[string]bool)})
}
