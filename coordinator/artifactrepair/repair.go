package artifactrepair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
)

// Why a holder is added or dropped (SetArtifactHolder.Reason).
const (
	ReasonMissing = "missing" // the file is gone
	ReasonDamaged = "damaged" // wrong size, or no longer hashes to its name
	ReasonFetched = "fetched" // the node fetched its copy back and verified it
	ReasonCopied  = "copied"  // the leader had the node take a copy
)

// Actor is the audit actor of the holder changes repairs make.
const Actor = "repair"

// ErrNoRecord: the leader has no record of the digest (collected).
var ErrNoRecord = errors.New("the artifact has no record")

// Blobs is this coordinator's blob store (*blob.Store).
type Blobs interface {
	Stat(digest string) (size int64, mod time.Time, err error)
	Verify(digest string) (int64, error)
	Remove(digest string) error
	Put(digest string, r io.Reader) (int64, error)
}

// Records is what repairs read of the replicated state (*state.Store).
type Records interface {
	ArtifactsHeldBy(node string) []artifacts.Artifact
	ArtifactRecords() []artifacts.Artifact
	NodeHTTPAddr(node string) string
}

// Peers is how repairs reach the other coordinators: the calls httpapi
// makes over mutual TLS, no credential sent. Errors it returns name no
// credential.
type Peers interface {
	// Self is this coordinator's id; IsLeader whether it leads now.
	Self() string
	IsLeader() bool
	// Members lists the coordinators of the Raft configuration.
	Members() ([]string, error)
	// ReportToLeader asks the leader to record that this coordinator
	// holds d (held: size bytes verified here) or does not; ErrNoRecord
	// when the leader has no record of d.
	ReportToLeader(ctx context.Context, d string, size int64, held bool, reason string) error
	// Open streams the copy of d that the coordinator at addr serves
	// from its disk.
	Open(ctx context.Context, addr, d string) (io.ReadCloser, error)
	// AskCopy has the coordinator at addr hold a verified copy of d, of
	// size bytes, taken from sources (coordinator ids) unless it has one:
	// nil only once it answered that it holds these very bytes.
	AskCopy(ctx context.Context, addr, d string, size int64, sources []string) error
}

// Repair checks and repairs the artifact copies of one coordinator.
type Repair struct {
	blobs   Blobs
	records Records
	peers   Peers
	propose state.Proposer
	now     func() time.Time
	log     *slog.Logger
}

// New returns the repairs of the coordinator that peers.Self names.
func New(blobs Blobs, records Records, peers Peers, propose state.Proposer, now func() time.Time, log *slog.Logger) *Repair {
	return &Repair{blobs: blobs, records: records, peers: peers, propose: propose, now: now, log: log}
}

// record proposes that node holds d (or not), as the leader does.
func (r *Repair) record(ctx context.Context, node, d string, size int64, held bool, reason string) error {
	_, err := state.Propose[artifacts.Outcome](ctx, r.propose, command.SetArtifactHolder{
		Digest: d, NodeID: node, Held: held, Size: size, Reason: reason, By: Actor, Now: r.now(),
	})
	if errors.Is(err, state.ErrNotFound) {
		return ErrNoRecord
	}
	return err
}

// report has the leader record that this coordinator holds d or does
// not: proposed here when this coordinator leads, else asked of the
// leader.
func (r *Repair) report(ctx context.Context, d string, size int64, held bool, reason string) error {
	if r.peers.IsLeader() {
		return r.record(ctx, r.peers.Self(), d, size, held, reason)
	}
	return r.peers.ReportToLeader(ctx, d, size, held, reason)
}

// Obtain makes sure this coordinator's disk holds an intact copy of d, of
// size bytes: one it has is verified (a damaged one is replaced), else
// one is fetched from the first of sources that serves it, and kept only
// if it hashes to d and has size bytes. It returns the source the bytes
// came from ("" when they were here already).
func (r *Repair) Obtain(ctx context.Context, d string, size int64, sources []string) (string, error) {
	if n, err := r.blobs.Verify(d); err == nil && n == size {
		return "", nil
	}
	var failed []string
	for _, node := range sources {
		if node == r.peers.Self() || slices.Contains(failed, node) {
			continue
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		addr := r.records.NodeHTTPAddr(node)
		if addr == "" {
			failed = append(failed, node+" (no address recorded)")
			continue
		}
		if err := r.fetch(ctx, addr, d, size); err != nil {
			r.log.Warn("fetching a copy of an artifact from a holder failed", "sha256", d, "holder", node, "error", err)
			failed = append(failed, node)
			continue
		}
		return node, nil
	}
	if len(failed) == 0 {
		return "", errors.New("no other coordinator holds it")
	}
	return "", fmt.Errorf("no holder served it (tried %s)", strings.Join(failed, ", "))
}

// fetch stores here the copy of d the coordinator at addr serves. More
// bytes than size fail the read and store nothing; bytes that do not hash
// to d are not kept either (Blobs.Put).
func (r *Repair) fetch(ctx context.Context, addr, d string, size int64) error {
	body, err := r.peers.Open(ctx, addr, d)
	if err != nil {
		return err
	}
	defer body.Close()
	n, err := r.blobs.Put(d, &CappedReader{R: body, Left: size})
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("served %d bytes, the record says %d", n, size)
	}
	return nil
}

// ErrTooLong: a copy served more bytes than its record says.
var ErrTooLong = errors.New("more bytes than the record says")

// CappedReader reads R and fails with Err (ErrTooLong when nil) once more
// than Left bytes have been read, so that an oversized body is refused
// before it could be stored.
type CappedReader struct {
	R    io.Reader
	Left int64
	Err  error
}

func (c *CappedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.Left+1 {
		p = p[:c.Left+1]
	}
	n, err := c.R.Read(p)
	c.Left -= int64(n)
	if c.Left < 0 {
		if c.Err != nil {
			return n, c.Err
		}
		return n, ErrTooLong
	}
	return n, err
}
