package fsm

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"sync/atomic"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/internal/countw"
)

// An operator's restore (PUT /v1/operator/snapshot) must be checked before
// Raft takes it: hashicorp/raft stores the snapshot, then has the FSM
// restore it, and stops the node if that fails. Checking by decoding it
// aside and then letting Raft decode it again costs two decodes, and two
// states in memory one after the other. Instead the upload is prepared
// (Prepare: decoded, checked, its output staged) and offered (Offer); the
// FSM.Restore that Raft then calls hashes the stream it is handed, and
// when that is the prepared snapshot, byte for byte (SHA-256), swaps the
// prepared state in without decoding it again.
//
// Any other restore that finds an offer (a snapshot a new leader installs
// on a node that lost its leadership meanwhile) cannot have been read
// twice: it discards the offer and fails, and Raft's install is retried
// by the leader, to find no offer the next time. Operator restores must
// not overlap (the handler runs one at a time, and Offer refuses a second
// while one stands): hashicorp/raft panics when the FSM fails its own
// user restore.

// Prepared is a snapshot decoded and checked, ready to replace the state.
type Prepared struct {
	digest [sha256.Size]byte
	size   int64
	tables *state.PreparedTables
	out    output.Restore
}

// Discard drops a prepared snapshot that will not be offered or was
// withdrawn unused; it is safe to call on one already taken.
func (p *Prepared) Discard() {
	if p != nil && p.out != nil {
		p.out.Discard()
		p.out, p.tables = nil, nil
	}
}

// Prepare decodes and checks a snapshot of size bytes, read from ra, as
// Restore would, without replacing anything: the tables are built aside
// and the output staged beside the output store's file. An error wrapping
// output.ErrStorage is the output store's failure; any other is the
// snapshot's.
//
// The snapshot can be read from anywhere, so its parts are prepared side
// by side: the store's section, the output section (found by skipping
// the store's chunks) and the digest of the whole. On S6's state the
// store's section takes the longest; the other two finish within it.
func (f *FSM) Prepare(ra io.ReaderAt, size int64) (*Prepared, error) {
	version, err := readHeader(bufio.NewReader(io.NewSectionReader(ra, 0, size)))
	if err != nil || version == 0 || (version >= checksummedVersion && size < int64(len(header(version))+trailerLen)) {
		// What is wrong, or a legacy snapshot, read once.
		return f.prepareWhole(bufio.NewReaderSize(io.NewSectionReader(ra, 0, size), chunkSize))
	}
	// The sections end where the checksum trailer starts (checksum.go).
	end := size
	if version >= checksummedVersion {
		end -= trailerLen
	}
	from := func(off int64) *bufio.Reader {
		return bufio.NewReaderSize(io.NewSectionReader(ra, off, end-off), chunkSize)
	}
	r := from(0)
	_, _ = readHeader(r)
	p := &Prepared{size: size}
	// The store's section decides first: once it is refused, the other
	// two parts stop reading (their error is not the one reported).
	var refused atomic.Bool
	aside := &stoppable{r: ra, stop: &refused}
	var wg sync.WaitGroup
	var hashErr, outErr error
	wg.Go(func() {
		p.digest, hashErr = digestOf(aside, version, end, size)
	})
	wg.Go(func() {
		or := bufio.NewReaderSize(io.NewSectionReader(aside, 0, end), chunkSize)
		if _, outErr = readHeader(or); outErr == nil {
			if outErr = skipSection(or); outErr == nil {
				p.out, outErr = f.prepareOutput(or)
			}
		}
	})
	tables, err := prepareTables(r)
	refused.Store(err != nil)
	wg.Wait()
	switch {
	case err != nil: // the sequential order: the store's section first
	case outErr != nil:
		err = outErr
	case hashErr != nil:
		err = fmt.Errorf("restore: %w", hashErr)
	default:
		err = tables.Holds(p.out)
	}
	if err != nil {
		p.Discard()
		return nil, err
	}
	p.tables = tables
	return p, nil
}

// digestOf hashes a snapshot of size bytes whole (SHA-256) and, for a
// version with one, checks its checksum trailer, which starts at end.
func digestOf(ra io.ReaderAt, version uint64, end, size int64) (digest [sha256.Size]byte, err error) {
	h := sha256.New()
	sum := newChecksum()
	if _, err := io.Copy(io.MultiWriter(h, sum), io.NewSectionReader(ra, 0, end)); err != nil {
		return digest, err
	}
	trailer := make([]byte, size-end)
	if _, err := ra.ReadAt(trailer, end); err != nil && !(errors.Is(err, io.EOF) && len(trailer) == 0) {
		return digest, err
	}
	h.Write(trailer)
	h.Sum(digest[:0])
	if version >= checksummedVersion {
		return digest, checkTrailer(sum, trailer)
	}
	return digest, nil
}

// stoppable reads from r until stop is set.
type stoppable struct {
	r    io.ReaderAt
	stop *atomic.Bool
}

var errStopped = errors.New("fsm: preparation stopped")

func (s *stoppable) ReadAt(p []byte, off int64) (int, error) {
	if s.stop.Load() {
		return 0, errStopped
	}
	return s.r.ReadAt(p, off)
}

// prepareWhole prepares a snapshot read once, front to back, hashing
// what it reads.
func (f *FSM) prepareWhole(r io.Reader) (*Prepared, error) {
	h := sha256.New()
	read := &countw.Writer{W: h} // every byte prepare reads, hashed and counted
	tables, out, err := f.prepare(io.TeeReader(r, read))
	if err != nil {
		return nil, err
	}
	if err := tables.Holds(out); err != nil {
		out.Discard()
		return nil, err
	}
	p := &Prepared{size: read.N, tables: tables, out: out}
	h.Sum(p.digest[:0])
	return p, nil
}

// ErrOfferStanding is Offer's answer while another offer stands.
var ErrOfferStanding = errors.New("fsm: another prepared restore is in flight")

// ErrNotPrepared is Restore's answer when an offer stands and the
// snapshot it is handed is another one: the offer is dropped, and the
// snapshot was read, so it cannot be decoded now (Raft's install is
// retried by its leader; an operator's restore never meets it, one
// running at a time).
var ErrNotPrepared = errors.New("fsm: the snapshot restored is not the one prepared")

// Offer makes p the state the next Restore of the same bytes swaps in.
// The returned withdraw, called once Raft's restore has returned, drops
// p if no Restore took it. One offer stands at a time: while one does,
// Offer refuses (ErrOfferStanding), for a Restore meant for the first
// would find the second and fail, and Raft stops a node whose own
// restore fails. Callers run one operator restore at a time.
func (f *FSM) Offer(p *Prepared) (withdraw func(), err error) {
	f.offerMu.Lock()
	if f.offer != nil {
		f.offerMu.Unlock()
		return nil, ErrOfferStanding
	}
	f.offer = p
	f.offerMu.Unlock()
	return func() {
		f.offerMu.Lock()
		mine := f.offer == p
		if mine {
			f.offer = nil
		}
		f.offerMu.Unlock()
		if mine {
			p.Discard()
		}
	}, nil
}

// takeOffer returns the standing offer, if any, and clears it.
func (f *FSM) takeOffer() *Prepared {
	f.offerMu.Lock()
	defer f.offerMu.Unlock()
	p := f.offer
	f.offer = nil
	return p
}

// restoreOffered swaps p in if r is the snapshot p was prepared from.
func (f *FSM) restoreOffered(r io.Reader, p *Prepared) error {
	h := sha256.New()
	n, err := io.Copy(h, bufio.NewReaderSize(r, chunkSize))
	if err != nil {
		p.Discard()
		return fmt.Errorf("restore: %w", err)
	}
	if n != p.size || !sameSum(h, p.digest) {
		p.Discard()
		return fmt.Errorf("%w (%d bytes against %d)", ErrNotPrepared, n, p.size)
	}
	out := p.out
	p.out = nil
	return returnMemory(f.store.RestorePrepared(p.tables, out))
}

func sameSum(h hash.Hash, want [sha256.Size]byte) bool {
	var got [sha256.Size]byte
	h.Sum(got[:0])
	return got == want
}
