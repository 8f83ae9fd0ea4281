package mmaptrim

import "sync/atomic"

// Counter counts the bytes read or written through a mapping since its
// last trim. Its zero value is ready, with Every 0 meaning every call is
// due.
type Counter struct {
	// Every is how many bytes pass between two trims.
	Every int64
	n     atomic.Int64
}

// Add counts n more bytes and reports whether a trim is due.
func (c *Counter) Add(n int) bool { return c.n.Add(int64(n)) >= c.Every }

// Reset starts the count again, as a trim begins.
func (c *Counter) Reset() { c.n.Store(0) }
