package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// drainPoll bounds how long the leader goes without looking for a drain
// deadline: a drain made meanwhile, on this node or before it led, is
// seen within it.
const drainPoll = time.Second

// expireDrains runs, while this node leads: when a draining worker's
// deadline comes, it proposes ExpireDrains, which stops the tasks the
// worker still holds (they are requeued without using up an attempt).
func (s *Server) expireDrains(ctx context.Context, log *slog.Logger) {
	for {
		wait := drainPoll
		next, pending := s.store.NextDrainDeadline()
		if pending {
			wait = min(wait, max(next.Sub(s.cfg.Clock.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(wait):
		}
		now := s.cfg.Clock.Now().UTC()
		if next, pending := s.store.NextDrainDeadline(); !pending || next.After(now) {
			continue
		}
		out, err := state.Propose[state.DrainOutcome](ctx, s.Propose, command.ExpireDrains{Now: now})
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("stopping the tasks of drained workers", "error", err)
			select { // a failed propose is not retried in a tight loop
			case <-ctx.Done():
				return
			case <-s.cfg.Clock.After(drainPoll):
			}
		case err == nil && len(out.Workers) > 0:
			log.Info("drain deadline passed; tasks told to stop", "workers", out.Workers, "tasks", out.Tasks)
		}
	}
}
