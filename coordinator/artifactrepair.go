package coordinator

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Artifact repair (httpapi/artifactrepair.go does the work): every
// coordinator checks the copies the state says it holds, and the leader
// brings the artifacts short of live holders back to min(2, cluster size).
const (
	// artifactLook is how often the loops look whether there is work.
	artifactLook = time.Second
	// artifactCheckEvery is how often a coordinator checks its own
	// copies at least; it checks them at once when the records that name
	// it change in number (after a start, as its log is applied).
	artifactCheckEvery = 10 * time.Second
	// artifactRepairEvery is how often the leader runs a round at least;
	// artifactRepairSoon is how soon after it takes office, after the
	// coordinators or their recorded addresses change, and after a
	// round its bounds cut short.
	artifactRepairEvery = 30 * time.Second
	artifactRepairSoon  = 2 * time.Second
)

// checkArtifactCopies runs this coordinator's checks of its own copies
// until ctx ends, on every coordinator, leader or not, once it knows a
// leader (a repair changes records through it).
func (s *Server) checkArtifactCopies(ctx context.Context, log *slog.Logger) {
	checker := s.api.NewArtifactChecker()
	tick := time.NewTicker(artifactLook)
	defer tick.Stop()
	self := s.node.ID()
	last, lastHeld := time.Time{}, -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, leader := s.node.Leader(); leader == "" {
			continue
		}
		held := s.store.ArtifactsHeldCount(self)
		if held == lastHeld && time.Since(last) < artifactCheckEvery {
			continue
		}
		out := checker.Check(ctx)
		if ctx.Err() != nil {
			return
		}
		last, lastHeld = time.Now(), held
		if out.Changed() {
			log.Info("checked this coordinator's artifact copies", "held", out.Held, "hashed", out.Hashed, "missing", out.Missing, "damaged", out.Damaged,
				"dropped", out.Dropped, "fetched", out.Fetched, "failed", out.Failed)
		}
	}
}

// replicateArtifacts runs the leader's rounds until ctx ends: soon after
// this coordinator takes office, soon after the coordinators change, and
// every artifactRepairEvery while it leads.
func (s *Server) replicateArtifacts(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(artifactLook)
	defer tick.Stop()
	leading := false
	var next time.Time
	var members, cursor string
	lost := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !s.LeaderReady() {
			leading, members, cursor = false, "", ""
			continue
		}
		now := time.Now()
		if !leading {
			leading, next = true, now.Add(artifactRepairSoon)
		}
		if m := s.membership(); m != members {
			if members != "" && next.After(now.Add(artifactRepairSoon)) {
				next = now.Add(artifactRepairSoon)
			}
			members = m
		}
		if now.Before(next) {
			continue
		}
		out, after, err := s.api.ReplicateArtifacts(ctx, cursor)
		if ctx.Err() != nil {
			return
		}
		cursor = after
		next = time.Now().Add(artifactRepairEvery)
		if out.More {
			next = time.Now().Add(artifactRepairSoon)
		}
		switch {
		case err != nil:
			log.Warn("bringing artifacts back to two copies", "error", err)
		case out.Short > 0:
			log.Info("artifacts short of copies", "planned", out.Short, "copied", out.Copied, "failed", out.Failed, "more", out.More)
		}
		if out.Lost != lost {
			if out.Lost > 0 {
				log.Warn("artifacts recorded with no live holder: their bytes are on no coordinator of the cluster; upload them again", "count", out.Lost)
			}
			lost = out.Lost
		}
	}
}

// membership names the coordinators of the Raft configuration with their
// recorded HTTP addresses: a change is a reason for a round.
func (s *Server) membership() string {
	servers, err := s.node.Servers()
	if err != nil {
		return ""
	}
	var parts []string
	for _, sv := range servers {
		parts = append(parts, string(sv.ID)+"="+s.store.NodeHTTPAddr(string(sv.ID)))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
