package command

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A batch entry is framed, not encoded: after the type byte come a
// version byte, the count of entries and each entry as its length and its
// bytes, all lengths as uvarints. The entries are commands encoded
// already; a batch copies them once and a replica slices them out of the
// log entry, with no second pass over their bytes (JSON turned each one
// into a base64 string on the leader and back on every replica). A body
// that opens with '{' is the JSON form written before framing, still read.
const batchFramed = 0x01

// ErrBadFrame refuses a framed batch whose lengths do not add up.
var ErrBadFrame = errors.New("command: malformed batch frame")

// maxBatchEntries bounds the count a frame may announce: every entry
// takes at least its length byte and one byte of command.
func maxBatchEntries(body []byte) uint64 { return uint64(len(body) / 2) }

// batchPrealloc caps the room reserved ahead for a batch's entries, so
// that a forged count sizes no allocation; real batches are smaller.
const batchPrealloc = 256

// encodeBatch frames b's entries behind the batch's type byte.
func encodeBatch(b Batch) []byte {
	size := 2 + binary.MaxVarintLen64
	for _, e := range b.Entries {
		size += binary.MaxVarintLen64 + len(e)
	}
	out := make([]byte, 0, size)
	out = append(out, byte(TypeBatch), batchFramed)
	out = binary.AppendUvarint(out, uint64(len(b.Entries)))
	for _, e := range b.Entries {
		out = binary.AppendUvarint(out, uint64(len(e)))
		out = append(out, e...)
	}
	return out
}

// decodeBatch reads a batch's body: framed, or the JSON of old entries.
// A framed batch's entries share body's memory.
func decodeBatch(body []byte) (Command, error) {
	if len(body) > 0 && body[0] == '{' {
		return as[Batch]().decode(body)
	}
	if len(body) == 0 || body[0] != batchFramed {
		return nil, fmt.Errorf("%w: unknown framing", ErrBadFrame)
	}
	rest := body[1:]
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > maxBatchEntries(rest) {
		return nil, fmt.Errorf("%w: entry count", ErrBadFrame)
	}
	rest = rest[k:]
	entries := make([][]byte, 0, min(n, batchPrealloc))
	for range n {
		size, k := binary.Uvarint(rest)
		if k <= 0 || size > uint64(len(rest)-k) {
			return nil, fmt.Errorf("%w: entry %d overruns the batch", ErrBadFrame, len(entries))
		}
		rest = rest[k:]
		entries = append(entries, rest[:size:size])
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last entry", ErrBadFrame, len(rest))
	}
	return Batch{Entries: entries}, nil
}
