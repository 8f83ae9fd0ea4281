package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/migauto"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// migAutoPoll is how often the leader's MIG auto mode looks at the queue
// and the fleet.
const migAutoPoll = 10 * time.Second

// autoRepartition runs the MIG auto mode while this node leads
// (coordinator/migauto): each poll, the planner reads the pending MIG
// demand and the fleet and may ask for one GPU's layout, or give one it
// partitioned back whole, proposed as an admin's request would be
// (audited as gpu.mig_auto_requested). The
// planner's memory of the demand starts afresh with each term.
func (s *Server) autoRepartition(ctx context.Context, log *slog.Logger) {
	planner := migauto.New(s.cfg.MIGAuto)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(migAutoPoll):
		}
		demand := s.store.PendingMIGDemand()
		fleet, err := s.store.FleetGPUs("")
		if err != nil {
			continue
		}
		c, ok := planner.Step(s.cfg.Clock.Now().UTC(), demand, fleet)
		if !ok {
			continue
		}
		if _, err := state.Propose[state.WorkerRecord](ctx, s.Propose, c); err != nil {
			if ctx.Err() == nil {
				log.Warn("MIG auto mode: asking for a layout failed", "worker_id", c.WorkerID, "uuid", c.UUID, "layout", c.Layout, "error", err)
			}
			continue
		}
		if len(c.Layout) == 0 {
			log.Info("MIG auto mode: giving an idle GPU back whole, its MIG demand gone", "worker_id", c.WorkerID, "uuid", c.UUID)
			continue
		}
		log.Info("MIG auto mode: repartitioning an idle GPU for waiting tasks", "worker_id", c.WorkerID, "uuid", c.UUID, "layout", c.Layout)
	}
}
