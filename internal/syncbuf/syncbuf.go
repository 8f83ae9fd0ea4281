// Package syncbuf is a byte buffer that one goroutine writes while
// another reads it: a test's view of output that streams in (an exec's,
// a process's).
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent use; its zero value is empty.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
