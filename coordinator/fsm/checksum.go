package fsm

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// From sections version 2 on, a snapshot ends in a checksum trailer: the
// CRC-32C (Castagnoli) of every byte before it, header included, four
// bytes big-endian. It is computed while the snapshot is written and
// checked while it is read, in the same pass, before anything it holds
// replaces the state; a CRC catches every change of one byte (any burst
// of up to 32 bits). It guards against damage, not against an attacker,
// who can compute it too: the snapshot's contents are checked on their
// own (state: invariants). A version 1 snapshot, written before the
// trailer, has none, and its version says so.
const (
	checksummedVersion = 2
	trailerLen         = crc32.Size
)

// ErrChecksum is a snapshot whose checksum does not match its contents.
var ErrChecksum = fmt.Errorf("%w: checksum does not match the contents", ErrBadSnapshot)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newChecksum() hash.Hash32 { return crc32.New(castagnoli) }

// summingWriter hashes what it writes.
type summingWriter struct {
	w   io.Writer
	sum hash.Hash32
}

func (s *summingWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.sum.Write(p[:n])
	return n, err
}

// trailer is the checksum of what was written.
func (s *summingWriter) trailer() []byte { return s.sum.Sum(nil) }

// trailerReader hands on, hashed, every byte of r but the last
// trailerLen, which it holds back as the trailer (verify).
type trailerReader struct {
	r        io.Reader
	sum      hash.Hash32
	buf      []byte // buf[off:end] read from r, not yet handed on
	off, end int
	eof      bool
}

// newTrailerReader reads the snapshot after its header, head: the
// checksum covers the header too.
func newTrailerReader(r io.Reader, head []byte) *trailerReader {
	t := &trailerReader{r: r, sum: newChecksum(), buf: make([]byte, chunkSize+trailerLen)}
	t.sum.Write(head)
	return t
}

func (t *trailerReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for t.end-t.off <= trailerLen && !t.eof {
		if t.off > 0 {
			t.end = copy(t.buf, t.buf[t.off:t.end])
			t.off = 0
		}
		n, err := t.r.Read(t.buf[t.end:])
		t.end += n
		switch {
		case err == io.EOF:
			t.eof = true
		case err != nil:
			return 0, err
		}
	}
	avail := t.end - t.off - trailerLen
	if avail <= 0 {
		return 0, io.EOF
	}
	n := copy(p, t.buf[t.off:t.off+avail])
	t.sum.Write(p[:n])
	t.off += n
	return n, nil
}

// verify checks the trailer once everything before it has been read.
func (t *trailerReader) verify() error {
	if !t.eof || t.end-t.off != trailerLen {
		return fmt.Errorf("%w: no checksum trailer", ErrBadSnapshot)
	}
	return checkTrailer(t.sum, t.buf[t.off:t.end])
}

// checkTrailer compares a trailer with the checksum of what it follows.
func checkTrailer(sum hash.Hash32, trailer []byte) error {
	if len(trailer) != trailerLen {
		return fmt.Errorf("%w: no checksum trailer", ErrBadSnapshot)
	}
	if want, got := binary.BigEndian.Uint32(trailer), sum.Sum32(); want != got {
		return fmt.Errorf("%w (trailer %08x, contents %08x)", ErrChecksum, want, got)
	}
	return nil
}
