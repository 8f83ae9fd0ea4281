// Package tailbuf keeps the end of a stream: the last bytes a process
// wrote to its standard error, say, for a report once it has died.
package tailbuf

import "sync"

// Buffer keeps the last Max bytes written to it. It is safe for concurrent
// use; the zero value keeps nothing (set Max).
type Buffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// New returns a buffer that keeps the last max bytes.
func New(max int) *Buffer { return &Buffer{Max: max} }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Len is how many bytes are kept.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}
