// Package preempt runs, on the leader, the loop that takes GPUs back for
// waiting tasks (docs/preemption.md): it asks the state for the
// preemption its policy allows now (state.PlanPreemption) and proposes
// it as one PreemptTasks command, which every replica applies alike and
// which the state machine checks again against the state it applies to.
//
// It looks when the pending work changes (a submission, an attempt's
// end) and at least every Interval, since an attempt passing its minimum
// runtime changes nothing in the state.
package preempt

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/sched/preemption"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
)

// Defaults of Config.
const (
	DefaultInterval = 2 * time.Second
	// DefaultSettle is the least time between two looks, however often
	// the pending work changes.
	DefaultSettle = 250 * time.Millisecond
	// DefaultPerLook bounds the preemptions one look proposes.
	DefaultPerLook = 16
)

// Config tunes the loop.
type Config struct {
	// Disabled turns preemption off.
	Disabled bool
	// Options are the policy's settings (MinRuntime is the storm guard;
	// zero takes preemption.DefaultMinRuntime: give a negative one for none).
	Options  preemption.Options
	Interval time.Duration
	Settle   time.Duration
	PerLook  int
}

func (c Config) withDefaults() Config {
	switch {
	case c.Options.MinRuntime == 0:
		c.Options.MinRuntime = preemption.DefaultMinRuntime
	case c.Options.MinRuntime < 0:
		c.Options.MinRuntime = 0
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Settle <= 0 {
		c.Settle = DefaultSettle
	}
	if c.PerLook <= 0 {
		c.PerLook = DefaultPerLook
	}
	return c
}

// Loop is the leader's preemption loop.
type Loop struct {
	store   *state.Store
	propose state.Proposer
	clock   clock.Clock
	log     *slog.Logger
	cfg     Config
}

// New returns a loop; Run runs it.
func New(store *state.Store, propose state.Proposer, clk clock.Clock, log *slog.Logger, cfg Config) *Loop {
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Loop{store: store, propose: propose, clock: clk, log: log, cfg: cfg.withDefaults()}
}

// Run looks for preemptions until ctx ends (this node stops leading).
func (l *Loop) Run(ctx context.Context) {
	if l.cfg.Disabled {
		return
	}
	for {
		changed := l.store.PendingChanged()
		l.Look(ctx)
		select {
		case <-ctx.Done():
			return
		case <-l.clock.After(l.cfg.Settle):
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-l.clock.After(l.cfg.Interval):
		}
	}
}

// Look proposes the preemptions due now, one at a time (each changes
// what the next one sees), at most PerLook; it returns how many applied.
func (l *Loop) Look(ctx context.Context) int {
	n := 0
	for range l.cfg.PerLook {
		c, ok := l.store.PlanPreemption(l.clock.Now().UTC(), l.cfg.Options)
		if !ok {
			return n
		}
		out, err := state.Propose[state.PreemptOutcome](ctx, l.propose, c)
		switch {
		case err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)):
			return n
		case err != nil:
			l.log.Warn("preemption refused", "task", c.For, "worker", c.WorkerID, "error", err)
			return n
		case c.For == "":
			// a sweep of expired holds
		default:
			n++
			l.log.Info("preempted", "for", c.For, "worker", c.WorkerID, "victims", out.Victims, "requeued", out.Requeued)
		}
		if c.For == "" {
			return n
		}
	}
	return n
}
