// Package logbuf keeps a task's output in memory so an executor can serve
// Logs at any time: every reader gets the output from the start, in order
// per stream, and follows it live until the buffer is closed.
//
// A Buffer is bounded: when it is full the oldest chunks are dropped and a
// reader that missed them gets one marker chunk on stderr saying how many
// bytes were lost. Executor plugins may use it as is.
package logbuf

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// DefaultLimit is the suggested per-task output limit: 8 MiB.
const DefaultLimit = 8 << 20

// chunk is a stored piece of output with its absolute byte offset in the
// task's output (counting bytes since dropped).
type chunk struct {
	stream string
	data   []byte
	off    int64
}

// Buffer holds one task's output. It is safe for concurrent use: writers
// append, any number of readers Follow.
type Buffer struct {
	mu     sync.Mutex
	limit  int
	chunks []chunk
	first  int64 // sequence number of chunks[0]
	size   int   // bytes held in chunks
	end    int64 // absolute offset after the last byte written
	closed bool
	wake   chan struct{} // closed and replaced on every change
}

// New returns a buffer holding at most limit bytes (DefaultLimit if limit
// is not positive).
func New(limit int) *Buffer {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Buffer{limit: limit, wake: make(chan struct{})}
}

// Write appends a copy of p to stream. Writes after Close are dropped.
func (b *Buffer) Write(stream string, p []byte) {
	if len(p) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	off := b.end
	b.end += int64(len(p))
	if len(p) > b.limit {
		// Keep only the newest limit bytes of an oversized write.
		off += int64(len(p) - b.limit)
		p = p[len(p)-b.limit:]
	}
	for len(b.chunks) > 0 && b.size+len(p) > b.limit {
		b.size -= len(b.chunks[0].data)
		b.chunks[0] = chunk{}
		b.chunks = b.chunks[1:]
		b.first++
	}
	b.chunks = append(b.chunks, chunk{stream: stream, data: append([]byte(nil), p...), off: off})
	b.size += len(p)
	b.notify()
}

// Writer returns an io.Writer appending to stream. Its Write never fails.
func (b *Buffer) Writer(stream string) io.Writer {
	return streamWriter{b: b, stream: stream}
}

type streamWriter struct {
	b      *Buffer
	stream string
}

func (w streamWriter) Write(p []byte) (int, error) {
	w.b.Write(w.stream, p)
	return len(p), nil
}

// Close marks the output complete: readers return once they have
// delivered everything. Close is idempotent.
func (b *Buffer) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.notify()
	}
}

// notify wakes readers. b.mu must be held.
func (b *Buffer) notify() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// Follow delivers the output to send from the start, in order, and keeps
// delivering new output until the buffer is closed and drained (nil), ctx
// ends (ctx.Err()), or send fails (send's error). If output was dropped
// before it could be delivered, send first gets a marker chunk on
// "stderr" with the number of bytes lost. send is never called with the
// buffer's lock held, so a slow reader does not hold up writers.
func (b *Buffer) Follow(ctx context.Context, send func(executor.LogChunk) error) error {
	var next int64   // sequence number of the next chunk to deliver
	var offset int64 // absolute offset after the last byte delivered
	var batch []chunk
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.mu.Lock()
		if next < b.first {
			next = b.first
		}
		batch = append(batch[:0], b.chunks[next-b.first:]...)
		next += int64(len(batch))
		closed, wake := b.closed, b.wake
		b.mu.Unlock()

		for _, c := range batch {
			if c.off > offset {
				marker := fmt.Sprintf("[gpulayer: %d bytes of earlier output dropped]\n", c.off-offset)
				if err := send(executor.LogChunk{Stream: "stderr", Data: []byte(marker)}); err != nil {
					return err
				}
			}
			if err := send(executor.LogChunk{Stream: c.stream, Data: c.data}); err != nil {
				return err
			}
			offset = c.off + int64(len(c.data))
		}
		if len(batch) > 0 {
			continue
		}
		if closed {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
