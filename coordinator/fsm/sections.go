package fsm

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A snapshot is framed as sections: the magic, a version, then the
// store's section, then the output section, then (version 2 on) a
// checksum trailer (checksum.go). Each section is a chunked
// stream, [uvarint n][n bytes]... [uvarint 0], so that neither section's
// codec needs to be self-delimiting and a truncated one is seen as such.
// A snapshot without the magic is one written before sections (the
// store's JSON alone, whose first byte is '{', the output in its "logs"
// field) restores too (legacy.go).

// snapshotMagic opens a sectioned snapshot; sectionsVersion, the version
// written, follows it. Versions oldestSections to sectionsVersion are
// read.
const (
	snapshotMagic   = "GPULSNAP"
	sectionsVersion = checksummedVersion
	oldestSections  = 1
)

// maxChunk bounds one chunk: a writer emits at most chunkSize, and a
// reader refuses more than maxChunk (a crafted length).
const (
	chunkSize = 64 << 10
	maxChunk  = 1 << 20
)

// ErrBadSnapshot is a snapshot whose framing is wrong.
var ErrBadSnapshot = errors.New("fsm: malformed snapshot")

// header is a sectioned snapshot's header of version v.
func header(v uint64) []byte { return binary.AppendUvarint([]byte(snapshotMagic), v) }

func writeHeader(w io.Writer) error {
	_, err := w.Write(header(sectionsVersion))
	return err
}

// readHeader reads a sectioned snapshot's header and returns its version,
// refusing one it does not know; 0, and nothing consumed, is a snapshot
// written before sections (legacy.go).
func readHeader(r *bufio.Reader) (uint64, error) {
	head, err := r.Peek(len(snapshotMagic))
	if err != nil || string(head) != snapshotMagic {
		if len(head) > 0 && head[0] == '{' {
			return 0, nil
		}
		return 0, fmt.Errorf("%w: no snapshot header", ErrBadSnapshot)
	}
	_, _ = r.Discard(len(snapshotMagic))
	v, err := binary.ReadUvarint(r)
	if err != nil {
		return 0, fmt.Errorf("%w: version: %v", ErrBadSnapshot, err)
	}
	if v < oldestSections || v > sectionsVersion {
		return 0, fmt.Errorf("%w: version %d, this coordinator reads %d to %d", ErrBadSnapshot, v, oldestSections, sectionsVersion)
	}
	return v, nil
}

// chunkWriter writes one section as chunks; Close ends it.
type chunkWriter struct {
	w   io.Writer
	buf []byte
}

func newChunkWriter(w io.Writer) *chunkWriter {
	return &chunkWriter{w: w, buf: make([]byte, 0, chunkSize)}
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == chunkSize {
			if err := c.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	if _, err := c.w.Write(binary.AppendUvarint(nil, uint64(len(c.buf)))); err != nil {
		return err
	}
	_, err := c.w.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

// Close writes what is buffered and the end of the section.
func (c *chunkWriter) Close() error {
	if err := c.flush(); err != nil {
		return err
	}
	_, err := c.w.Write([]byte{0})
	return err
}

// chunkReader reads one section: io.EOF at its end, an ErrBadSnapshot if
// the stream ends first or a chunk is too long.
type chunkReader struct {
	r    *bufio.Reader
	left int
	done bool
	err  error // the first error but io.EOF, kept for a codec that hides it
}

func newChunkReader(r *bufio.Reader) *chunkReader { return &chunkReader{r: r} }

func (c *chunkReader) Read(p []byte) (int, error) {
	n, err := c.read(p)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

func (c *chunkReader) read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		n, err := binary.ReadUvarint(c.r)
		if err != nil {
			return 0, fmt.Errorf("%w: section cut short: %v", ErrBadSnapshot, err)
		}
		if n == 0 {
			c.done = true
			return 0, io.EOF
		}
		if n > maxChunk {
			return 0, fmt.Errorf("%w: chunk of %d bytes", ErrBadSnapshot, n)
		}
		c.left = int(n)
	}
	k, err := c.r.Read(p[:min(len(p), c.left)])
	c.left -= k
	if err == io.EOF {
		err = fmt.Errorf("%w: section cut short", ErrBadSnapshot)
	}
	return k, err
}

// drain reads the rest of the section, so that the next one may start;
// a codec may stop before its section's end marker.
func (c *chunkReader) drain() error {
	_, err := io.Copy(io.Discard, c)
	return err
}

// skipSection reads past one section without handing its bytes to
// anyone.
func skipSection(r *bufio.Reader) error { return newChunkReader(r).drain() }
