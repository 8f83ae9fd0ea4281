package outputstore

import (
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// bbolt reads the file through a read-only shared mapping, and every
// page it reads (a leaf copied when a task's bucket grows, records served
// to a reader or streamed into a snapshot) stays in this process's page
// tables: resident memory would grow with the output held, although those
// pages are the kernel's page cache and cost the heap nothing. After each
// trimBytes of output written or read, the store drops its mapping's page
// table entries (madvise MADV_DONTNEED, trim_linux.go): the pages stay in
// the page cache, and the next read of one maps it again.
const trimBytes = 4 << 20

// trimCounter counts the bytes read or written through one file's
// mapping since its last trim.
type trimCounter struct{ n atomic.Int64 }

// due counts n more bytes and reports whether a trim is due; a caller
// told so trims (and the count starts again).
func (c *trimCounter) due(n int) bool {
	if c.n.Add(int64(n)) < trimBytes {
		return false
	}
	c.n.Store(0)
	return true
}

// trimTx drops the resident pages of the mapping tx reads through. An
// open transaction, read or write, holds bbolt's mapping in place (a
// remap waits for every transaction to end), so the address and the
// extent hold still while they are dropped. tx.Size is the high-water
// mark of the pages in use as tx sees them, all of which bbolt keeps
// mapped: the range never reaches past the mapping.
//
// It takes the caller's transaction and never opens one: a transaction
// begun while another is held by the same goroutine can wait forever on
// a remap or a Close that waits for the first.
func trimTx(tx *bolt.Tx) {
	if size := tx.Size(); size > 0 {
		dropPages(tx.DB().Info().Data, uintptr(size))
	}
}

// trimDB trims db's mapping from a read transaction of its own, for a
// caller that holds none.
func trimDB(db *bolt.DB) {
	_ = db.View(func(tx *bolt.Tx) error { trimTx(tx); return nil })
}
