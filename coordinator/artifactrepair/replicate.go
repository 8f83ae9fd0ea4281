package artifactrepair

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// ReplicationOutcome counts what one leader round of Replicate found and
// did.
type ReplicationOutcome struct {
	Short  int  // artifacts planned this round: fewer live holders than they need
	Copied int  // copies made and recorded
	Failed int  // artifacts no coordinator could take a copy of this round
	Lost   int  // artifacts no live holder is left for
	More   bool // the round's bounds left short artifacts for the next
}

// Replication is one artifact a round brings back to enough copies.
type Replication struct {
	Digest  string
	Size    int64
	Copies  int      // how many more holders it needs
	Sources []string // its live holders
	Targets []string // coordinators without a copy to ask, in order
}

// Bounds of one leader round.
const (
	replicateLimit    = 16
	replicateMaxBytes = 4 << 30
)

// Replicate runs one leader round: it has the artifacts short of live
// holders copied to other coordinators, starting after the digest after,
// within the round's bounds, and returns where the next round starts.
// Each new holder is recorded only once it answered that it verified the
// bytes on its disk.
func (r *Repair) Replicate(ctx context.Context, after string) (ReplicationOutcome, string, error) {
	var out ReplicationOutcome
	if !r.peers.IsLeader() || r.blobs == nil {
		return out, after, nil
	}
	members, err := r.peers.Members()
	if err != nil {
		return out, after, err
	}
	self := r.peers.Self()
	members = slices.Clone(members)
	if !slices.Contains(members, self) {
		members = append(members, self)
	}
	slices.Sort(members)
	reachable := func(id string) bool { return id == self || r.records.NodeHTTPAddr(id) != "" }
	plan, lost, more := Plan(r.records.ArtifactRecords(), self, members, reachable, after, replicateLimit, replicateMaxBytes)
	out.Short, out.Lost, out.More = len(plan), lost, more
	next := ""
	for _, p := range plan {
		if ctx.Err() != nil || !r.peers.IsLeader() {
			out.More = true
			return out, next, ctx.Err()
		}
		next = p.Digest
		copied, gone := 0, false
		for _, target := range p.Targets {
			if copied == p.Copies || gone {
				break
			}
			if err := r.copyTo(ctx, target, p); err != nil {
				r.log.Warn("a coordinator could not take a copy of an artifact short of copies", "sha256", p.Digest, "coordinator", target, "error", err)
				continue
			}
			err := r.record(ctx, target, p.Digest, p.Size, true, ReasonCopied)
			switch {
			case errors.Is(err, ErrNoRecord):
				gone = true // collected meanwhile; the copy is swept
			case err != nil:
				r.log.Warn("recording an artifact's new holder", "sha256", p.Digest, "coordinator", target, "error", err)
			default:
				copied++
				out.Copied++
				r.log.Info("artifact copied to another coordinator", "sha256", p.Digest, "bytes", p.Size, "coordinator", target, "from", strings.Join(p.Sources, ","))
			}
		}
		if copied < p.Copies && !gone {
			out.Failed++
		}
	}
	if !out.More {
		next = ""
	}
	return out, next, nil
}

// copyTo has target hold a verified copy of p's artifact: this
// coordinator fetches it itself, another is asked through Peers.
func (r *Repair) copyTo(ctx context.Context, target string, p Replication) error {
	if target == r.peers.Self() {
		_, err := r.Obtain(ctx, p.Digest, p.Size, p.Sources)
		return err
	}
	addr := r.records.NodeHTTPAddr(target)
	if addr == "" {
		return errors.New("no address recorded")
	}
	return r.peers.AskCopy(ctx, addr, p.Digest, p.Size, p.Sources)
}
