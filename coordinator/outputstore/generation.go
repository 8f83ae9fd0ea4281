package outputstore

import (
	"errors"
	"log/slog"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/gpulayer/gpulayer/internal/mmaptrim"
)

// generation is one open output file: the one the store reads and writes
// until a restore swaps another in, and after that the one its open
// captures still stream from. It is closed when the last of those lets it
// go, never while a capture reads it: bbolt's Close waits for every read
// transaction, and a restore (or the store's Close) must not hold up
// every reader and writer of the store meanwhile.
type generation struct {
	db   *bolt.DB
	trim mmaptrim.Counter // bytes read or written through db's mapping (trim.go)

	mu   sync.Mutex
	refs int // the store's, while it is current, and one per open capture

	closed chan struct{} // closed once db is
	err    error         // db.Close's answer, set before closed is
}

// errOverReleased is release's panic when a reference is released twice.
var errOverReleased = errors.New("outputstore: output file released more often than acquired")

func newGeneration(db *bolt.DB) *generation {
	g := &generation{db: db, refs: 1, closed: make(chan struct{})}
	g.trim.Every = trimBytes
	return g
}

// acquire takes one more reference. The caller holds one already (the
// store's, under the store's read lock), so the file cannot be closing.
func (g *generation) acquire() {
	g.mu.Lock()
	g.refs++
	g.mu.Unlock()
}

// release drops one reference and closes the file with the last one.
// Releasing more references than were taken is a bug in this package (the
// file would already be closed, or be closed under a holder's feet), so it
// panics rather than go on.
func (g *generation) release() {
	g.mu.Lock()
	g.refs--
	refs := g.refs
	g.mu.Unlock()
	if refs < 0 {
		panic(errOverReleased)
	}
	if refs == 0 {
		g.err = g.db.Close()
		if g.err != nil {
			// Nothing is lost (the file is a cache, rebuilt at the next
			// start), but a replaced file's error has no caller to go to.
			slog.Warn("outputstore: closing an output file", "path", g.db.Path(), "err", g.err)
		}
		close(g.closed)
	}
}

// wait blocks until the file is closed and returns Close's answer.
func (g *generation) wait() error {
	<-g.closed
	return g.err
}
