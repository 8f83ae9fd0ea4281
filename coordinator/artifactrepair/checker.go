package artifactrepair

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
)

const (
	// checkHashBudget bounds the bytes one check of a coordinator's own
	// copies hashes; the rest are hashed in later checks (their size is
	// checked every time).
	checkHashBudget = 1 << 30
	// reverifyEvery is how often every copy is hashed again.
	reverifyEvery = 24 * time.Hour
)

// CheckOutcome counts what one check of a coordinator's own copies found
// and did.
type CheckOutcome struct {
	Held    int // records that list this coordinator
	Hashed  int // copies read through and hashed
	Missing int // copies not on disk
	Damaged int // copies of the wrong size or that no longer hash to their name
	Dropped int // holder entries dropped from their record
	Fetched int // copies fetched back from another holder
	Failed  int // copies that could be neither fetched nor dropped (tried again next time)
}

// Changed reports whether the check found anything wrong.
func (o CheckOutcome) Changed() bool { return o.Missing+o.Damaged > 0 }

// Checker checks the copies the replicated state says this coordinator
// holds. It remembers which it has hashed, so that each copy is read
// through once per reverifyEvery (and once after a start), and only its
// size is checked in between. Not safe for concurrent use: one loop owns
// it.
type Checker struct {
	r *Repair
	// verified maps a digest to its file's modification time when it
	// was found intact.
	verified map[string]time.Time
	// since is when verified was last emptied: a file written after it
	// was written by Blobs.Put, which keeps only bytes that hash to their
	// name, and is not hashed again until the next period.
	since time.Time
}

// NewChecker returns a checker of this coordinator's copies.
func (r *Repair) NewChecker() *Checker {
	return &Checker{r: r, verified: map[string]time.Time{}, since: time.Now()}
}

// Check checks every copy the state says this coordinator holds: each
// that is missing or damaged is dropped from its record, fetched again
// from another holder and, verified, recorded again.
func (c *Checker) Check(ctx context.Context) CheckOutcome {
	var out CheckOutcome
	if c.r.blobs == nil {
		return out // this coordinator keeps no artifacts
	}
	if time.Since(c.since) > reverifyEvery {
		c.verified = map[string]time.Time{}
		c.since = time.Now()
	}
	held := c.r.records.ArtifactsHeldBy(c.r.peers.Self())
	out.Held = len(held)
	budget := int64(checkHashBudget)
	seen := make(map[string]bool, len(held))
	for _, a := range held {
		if ctx.Err() != nil {
			return out
		}
		seen[a.Digest] = true
		if problem := c.inspect(a, &budget, &out); problem != "" {
			c.repair(ctx, a, problem, &out)
		}
	}
	for d := range c.verified {
		if !seen[d] {
			delete(c.verified, d)
		}
	}
	return out
}

// inspect reports what is wrong with this coordinator's copy of a:
// ReasonMissing, ReasonDamaged, or "" when nothing is, or nothing can be
// told now (the disk did not answer; hashing left for a later check).
func (c *Checker) inspect(a artifacts.Artifact, budget *int64, out *CheckOutcome) string {
	log, blobs := c.r.log, c.r.blobs
	size, mod, err := blobs.Stat(a.Digest)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return ReasonMissing
	case err != nil:
		log.Warn("this coordinator cannot look at its copy of an artifact", "sha256", a.Digest, "error", err)
		return ""
	case size != a.Size:
		return ReasonDamaged
	}
	if v, ok := c.verified[a.Digest]; ok && v.Equal(mod) {
		return ""
	}
	if mod.After(c.since) {
		c.verified[a.Digest] = mod
		return ""
	}
	if *budget <= 0 {
		return ""
	}
	*budget -= size
	out.Hashed++
	_, err = blobs.Verify(a.Digest)
	switch {
	case errors.Is(err, blob.ErrDigestMismatch):
		return ReasonDamaged
	case errors.Is(err, blob.ErrNotFound):
		return ReasonMissing
	case err != nil:
		log.Warn("this coordinator cannot read its copy of an artifact", "sha256", a.Digest, "error", err)
		return ""
	}
	c.verified[a.Digest] = mod
	return ""
}

// repair handles a copy found missing or damaged: the record stops
// naming this coordinator, a damaged file is removed (never served again;
// reads relay from another holder), the bytes are fetched from another
// holder and, verified on this disk, this coordinator is recorded again.
// When the record cannot be changed now (no leader), the fetch still
// runs: a node listed for bytes it has again keeps no lie.
func (c *Checker) repair(ctx context.Context, a artifacts.Artifact, problem string, out *CheckOutcome) {
	r := c.r
	self := r.peers.Self()
	if problem == ReasonMissing {
		out.Missing++
	} else {
		out.Damaged++
	}
	delete(c.verified, a.Digest)
	r.log.Warn("this coordinator's copy of an artifact is "+problem+"; repairing it", "sha256", a.Digest, "bytes", a.Size, "holders", strings.Join(a.Holders, ","))
	dropErr := r.report(ctx, a.Digest, a.Size, false, problem)
	if problem == ReasonDamaged {
		if err := r.blobs.Remove(a.Digest); err != nil {
			r.log.Warn("removing a damaged artifact copy", "sha256", a.Digest, "error", err)
		}
	}
	switch {
	case errors.Is(dropErr, ErrNoRecord):
		return // collected meanwhile: nothing to hold
	case dropErr != nil:
		r.log.Warn("could not have this coordinator dropped from an artifact's holders; will retry", "sha256", a.Digest, "error", dropErr)
	default:
		out.Dropped++
	}
	var sources []string
	for _, h := range a.Holders {
		if h != self {
			sources = append(sources, h)
		}
	}
	from, err := r.Obtain(ctx, a.Digest, a.Size, sources)
	if err != nil {
		if dropErr != nil {
			out.Failed++
		}
		r.log.Warn("could not fetch an artifact copy back", "sha256", a.Digest, "error", err, "dropped", dropErr == nil)
		return
	}
	out.Fetched++
	if _, mod, err := r.blobs.Stat(a.Digest); err == nil {
		c.verified[a.Digest] = mod
	}
	if dropErr != nil {
		return // still listed, and holds the bytes again
	}
	if err := r.report(ctx, a.Digest, a.Size, true, ReasonFetched); err != nil && !errors.Is(err, ErrNoRecord) {
		// The leader's rounds record it when the artifact is short of
		// copies (a copy request finds the bytes here).
		r.log.Warn("could not have this coordinator recorded again as an artifact's holder", "sha256", a.Digest, "error", err)
		return
	}
	r.log.Info("artifact copy repaired", "sha256", a.Digest, "from", from)
}
