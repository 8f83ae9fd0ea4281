package container

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// Reap removes every container labelled as the agent key's (LabelAgent)
// whose attempt keep does not name: what an agent or plugin killed without
// its tasks left behind. It returns how many it removed.
func Reap(ctx context.Context, eng engine, key string, keep func(attempt string) bool) (int, error) {
	list, err := eng.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelAgent+"="+key))})
	if err != nil {
		return 0, fmt.Errorf("listing containers: %w", err)
	}
	n := 0
	for _, c := range list {
		if keep != nil && keep(c.Labels[LabelAttempt]) {
			continue
		}
		if err := eng.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isGone(err) {
			return n, fmt.Errorf("removing container %s: %w", c.ID, err)
		}
		n++
	}
	return n, nil
}

// ReapAgent removes every container the agent whose task root is root
// left behind, through the daemon the environment names: for an agent
// starting, before it runs any task.
func ReapAgent(ctx context.Context, root string, log *slog.Logger) {
	c, err := Dial()
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := c.Ping(ctx); err != nil {
		return // no daemon: nothing can have been left there
	}
	n, err := Reap(ctx, c, root, nil)
	if err != nil {
		log.Warn("removing containers left by an earlier run failed", "error", err)
	}
	if n > 0 {
		log.Warn("removed containers an earlier run left behind", "containers", n)
	}
}

// reapOnce removes, before the first task of the agent key, the
// containers of that agent this executor does not run.
func (e *Executor) reapOnce(ctx context.Context, eng engine, key string) {
	e.mu.Lock()
	done := e.reaped[key]
	e.reaped[key] = true
	e.mu.Unlock()
	if done {
		return
	}
	n, err := Reap(ctx, eng, key, e.tasks.Active)
	if err != nil {
		e.log().Warn("removing orphaned containers failed", "error", err)
	}
	if n > 0 {
		e.log().Warn("removed orphaned containers of this agent", "containers", n)
	}
}
