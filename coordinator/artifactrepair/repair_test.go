package artifactrepair

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/blob"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// fakePeers is the other coordinators: each address serves the bytes
// set for it, and what was asked of the leader is kept.
type fakePeers struct {
	self    string
	leader  bool
	members []string
	served  map[string][]byte // address → the bytes it serves
	mu      sync.Mutex
	reports []string // "held reason" asked of the leader
	asked   []string // addresses asked to take a copy
}

func (p *fakePeers) Self() string               { return p.self }
func (p *fakePeers) IsLeader() bool             { return p.leader }
func (p *fakePeers) Members() ([]string, error) { return p.members, nil }
func (p *fakePeers) ReportToLeader(_ context.Context, _ string, _ int64, held bool, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	what := "dropped " + reason
	if held {
		what = "held " + reason
	}
	p.reports = append(p.reports, what)
	return nil
}
func (p *fakePeers) Open(_ context.Context, addr, _ string) (io.ReadCloser, error) {
	b, ok := p.served[addr]
	if !ok {
		return nil, errors.New("answered HTTP 404")
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}
func (p *fakePeers) AskCopy(_ context.Context, addr, _ string, _ int64, _ []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, addr)
	return nil
}

type fixture struct {
	store *state.Store
	blobs *blob.Store
	peers *fakePeers
	r     *Repair
	d     string
	data  []byte
}

// newFixture records one artifact held by holders, with c2 and c3
// reachable at http://c2 and http://c3.
func newFixture(t *testing.T, self string, leader bool, holders ...string) *fixture {
	t.Helper()
	f := &fixture{store: state.New(), data: []byte("the bytes of an artifact")}
	sum := sha256.Sum256(f.data)
	f.d = hex.EncodeToString(sum[:])
	blobs, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.blobs = blobs
	now := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	for _, c := range []command.Command{
		command.RegisterNode{NodeID: "c2", HTTPAddr: "http://c2"},
		command.RegisterNode{NodeID: "c3", HTTPAddr: "http://c3"},
		command.RecordArtifact{Digest: f.d, Size: int64(len(f.data)), NodeID: holders[0], Holders: holders, By: "test", Now: now},
	} {
		if err := f.store.Apply(c).(state.Result).Err(); err != nil {
			t.Fatal(err)
		}
	}
	f.peers = &fakePeers{self: self, leader: leader, members: []string{"c1", "c2", "c3"}, served: map[string][]byte{}}
	propose := func(_ context.Context, c command.Command) (state.Result, error) {
		return f.store.Apply(c).(state.Result), nil
	}
	f.r = New(blobs, f.store, f.peers, propose, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	return f
}

func (f *fixture) holders(t *testing.T) []string {
	t.Helper()
	for _, a := range f.store.ArtifactRecords() {
		if a.Digest == f.d {
			return a.Holders
		}
	}
	t.Fatal("no record")
	return nil
}

// A follower that lost its copy has the leader drop it, fetches the
// bytes back from another holder, and has itself recorded again.
func TestCheckerFetchesAMissingCopyBack(t *testing.T) {
	f := newFixture(t, "c1", false, "c1", "c2")
	f.peers.served["http://c2"] = f.data
	out := f.r.NewChecker().Check(t.Context())
	if out.Held != 1 || out.Missing != 1 || out.Dropped != 1 || out.Fetched != 1 || out.Failed != 0 {
		t.Fatalf("outcome %+v", out)
	}
	if want := []string{"dropped missing", "held fetched"}; !slices.Equal(f.peers.reports, want) {
		t.Fatalf("asked of the leader %q, want %q", f.peers.reports, want)
	}
	if n, err := f.blobs.Verify(f.d); err != nil || n != int64(len(f.data)) {
		t.Fatalf("the copy is not back: %d %v", n, err)
	}
	if again := f.r.NewChecker().Check(t.Context()); again.Changed() {
		t.Fatalf("a second check found %+v", again)
	}
}

// Bytes that do not hash to the digest, or are too many, are not kept,
// and the coordinator is not recorded again.
func TestCheckerKeepsNoWrongBytes(t *testing.T) {
	for name, served := range map[string][]byte{
		"other bytes": []byte("something else entirely!"),
		"too many":    append([]byte("the bytes of an artifact"), 'x'),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "c1", false, "c1", "c2")
			f.peers.served["http://c2"] = served
			out := f.r.NewChecker().Check(t.Context())
			if out.Missing != 1 || out.Dropped != 1 || out.Fetched != 0 {
				t.Fatalf("outcome %+v", out)
			}
			if !slices.Equal(f.peers.reports, []string{"dropped missing"}) {
				t.Fatalf("asked of the leader %q", f.peers.reports)
			}
			if _, _, err := f.blobs.Stat(f.d); !errors.Is(err, blob.ErrNotFound) {
				t.Fatalf("wrong bytes were kept: %v", err)
			}
		})
	}
}

// The leader, holding no copy of an artifact only c2 holds, takes one
// itself and records itself; a leader that holds one asks another
// coordinator and records nothing until it answers.
func TestReplicateBringsAnArtifactToTwoCopies(t *testing.T) {
	f := newFixture(t, "c1", true, "c2")
	f.peers.served["http://c2"] = f.data
	out, next, err := f.r.Replicate(t.Context(), "")
	if err != nil || out.Short != 1 || out.Copied != 1 || out.Failed != 0 || next != "" {
		t.Fatalf("round: %+v %q %v", out, next, err)
	}
	if got := f.holders(t); !slices.Equal(got, []string{"c1", "c2"}) && !slices.Equal(got, []string{"c2", "c1"}) {
		t.Fatalf("holders %v", got)
	}
	if len(f.peers.asked) != 0 {
		t.Fatalf("asked %v although the leader could take the copy", f.peers.asked)
	}

	g := newFixture(t, "c1", true, "c1")
	if _, err := g.blobs.Put(g.d, bytes.NewReader(g.data)); err != nil {
		t.Fatal(err)
	}
	out, _, err = g.r.Replicate(t.Context(), "")
	if err != nil || out.Copied != 1 || !slices.Equal(g.peers.asked, []string{"http://c2"}) {
		t.Fatalf("round: %+v asked %v %v", out, g.peers.asked, err)
	}
	if got := g.holders(t); !slices.Contains(got, "c2") {
		t.Fatalf("holders %v", got)
	}
}

// A follower runs no round.
func TestReplicateOnlyOnTheLeader(t *testing.T) {
	f := newFixture(t, "c1", false, "c2")
	if out, _, err := f.r.Replicate(t.Context(), ""); err != nil || out != (ReplicationOutcome{}) {
		t.Fatalf("a follower's round: %+v %v", out, err)
	}
}
