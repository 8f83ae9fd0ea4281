package coordinator

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// DefaultArtifactGrace is how old a blob file no record names (on this
// node) must be before a sweep removes it: longer than an upload and its
// copy take (httpapi's artifactTransfer is 30 minutes), so that the bytes
// of an upload whose record is not written yet are never taken.
const DefaultArtifactGrace = time.Hour

// SweepArtifacts removes from this node's disk the blobs that the
// replicated state no longer lists this node as holding (garbage
// collection removed their record, or a copy was never recorded) and that
// were written more than grace ago. It returns how many it removed. The
// state machine never touches the disk: each node sweeps its own.
func (s *Server) SweepArtifacts(ctx context.Context, grace time.Duration) (int, error) {
	held, err := s.blobs.List()
	if err != nil {
		return 0, err
	}
	self := s.node.ID()
	cutoff := time.Now().Add(-grace) // file times are the disk's, not the cluster clock's
	removed := 0
	for _, h := range held {
		if ctx.Err() != nil {
			return removed, ctx.Err()
		}
		if h.ModTime.After(cutoff) {
			continue
		}
		if a, ok := s.store.Artifact(h.Digest); ok && slices.Contains(a.Holders, self) {
			continue
		}
		if err := s.blobs.Remove(h.Digest); err != nil {
			return removed, err
		}
		removed++
	}
	return removed, nil
}

// sweepArtifacts tends this node's artifact files until ctx ends: it
// sweeps its blobs every retention interval, on every node, leader or
// not, and runs the repairs beside (artifactrepair.go): this node's
// checks of the copies it holds, and, while it leads, the rounds that
// bring artifacts back to as many copies as they need.
func (s *Server) sweepArtifacts(ctx context.Context, log *slog.Logger) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.checkArtifactCopies(ctx, log) })
	wg.Go(func() { s.replicateArtifacts(ctx, log) })
	grace := s.cfg.Retention.withDefaults().ArtifactGrace
	s.everyRetentionInterval(ctx, func() {
		n, err := s.SweepArtifacts(ctx, grace)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweeping artifacts no record names", "error", err)
		case n > 0:
			log.Info("artifacts removed from this node's disk", "count", n)
		}
	})
}
