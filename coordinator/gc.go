package coordinator

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// Retention defaults (Nomad's job_gc_threshold is the anchor): a finished
// job is kept 4 h, and at most 50,000 finished jobs are kept.
const (
	DefaultJobGCThreshold = 4 * time.Hour
	DefaultJobGCKeep      = 50_000
	DefaultJobGCInterval  = 5 * time.Minute
	// gcBatch bounds the jobs one CollectGarbage entry removes, so that
	// one log entry (and one apply under the store's lock) stays small.
	gcBatch = 1000
)

// Retention is how long finished jobs are kept.
type Retention struct {
	// Threshold: a finished job older than this is removed.
	Threshold time.Duration
	// Keep: at most this many finished jobs are kept (the newest).
	Keep int
	// Interval: how often the leader collects, and each node sweeps its
	// disk of artifacts no record names.
	Interval time.Duration
	// ArtifactGrace: a blob on a node's disk that no record names there
	// is removed once this old (default DefaultArtifactGrace).
	ArtifactGrace time.Duration
}

func (r Retention) withDefaults() Retention {
	if r.Threshold <= 0 {
		r.Threshold = DefaultJobGCThreshold
	}
	if r.Keep <= 0 {
		r.Keep = DefaultJobGCKeep
	}
	if r.Interval <= 0 {
		r.Interval = DefaultJobGCInterval
	}
	if r.ArtifactGrace <= 0 {
		r.ArtifactGrace = DefaultArtifactGrace
	}
	return r
}

// CollectGarbage removes the finished jobs the retention makes due, with
// threshold in place of the configured age when it is not negative, and
// the artifacts no job left names that are as old, in batches until none
// is due, and returns how many jobs it removed.
func (s *Server) CollectGarbage(ctx context.Context, by string, threshold time.Duration) (int, error) {
	r := s.cfg.Retention.withDefaults()
	if threshold < 0 {
		threshold = r.Threshold
	}
	removed := 0
	for {
		out, err := state.Propose[state.GCOutcome](ctx, s.Propose, command.CollectGarbage{
			Now: s.cfg.Clock.Now().UTC(), OlderThan: threshold, KeepFinished: r.Keep, Limit: gcBatch, By: by, Artifacts: true,
		})
		if err != nil {
			return removed, err
		}
		removed += out.Removed
		if !out.More {
			return removed, nil
		}
	}
}

// collectGarbage runs, while this node leads, a collection every
// retention interval.
func (s *Server) collectGarbage(ctx context.Context, log *slog.Logger) {
	r := s.cfg.Retention.withDefaults()
	s.everyRetentionInterval(ctx, func() {
		n, err := s.CollectGarbage(ctx, "retention", -1)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("collecting finished jobs", "error", err)
		case n > 0:
			log.Info("finished jobs removed", "count", n, "older_than", r.Threshold, "keep", r.Keep)
		}
	})
}

// everyRetentionInterval calls fn every retention interval until ctx
// ends.
func (s *Server) everyRetentionInterval(ctx context.Context, fn func()) {
	interval := s.cfg.Retention.withDefaults().Interval
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Clock.After(interval):
		}
		fn()
	}
}
