package outputstore

import (
	bolt "go.etcd.io/bbolt"

	"github.com/gpulayer/gpulayer/internal/mmaptrim"
)

// bbolt reads the file through a read-only shared mapping, and every
// page it reads (a leaf copied when a task's bucket grows, records served
// to a reader or streamed into a snapshot) stays in this process's page
// tables (package mmaptrim). After each trimBytes of output written or
// read through a file, the store drops its mapping's page-table entries.
// Appends land all over the one B+tree of records, so the pages touched
// between two trims are scattered: at 4 MiB, up to 16 MB of the file
// stayed resident at the end of S8; at 1 MiB, at most 6 MB.
const trimBytes = 1 << 20

// trimDue counts n bytes through g's mapping and reports whether a trim
// is due; a caller told so trims (and the count starts again).
func (g *generation) trimDue(n int) bool {
	if !g.trim.Add(n) {
		return false
	}
	g.trim.Reset()
	return true
}

// trimTx drops the resident pages of the mapping the read transaction tx
// reads through. An open read transaction holds bbolt's mapping in place
// (a remap waits for every one to end), so the address and the extent
// hold still while they are dropped. tx.Size is the high-water mark of
// the pages in use as tx sees them, all of which bbolt keeps mapped: the
// range never reaches past the mapping. (A write transaction's Size may
// count pages the file grows by only when it commits: never trim from
// one.)
//
// It takes the caller's transaction and never opens one: a transaction
// begun while another is held by the same goroutine can wait forever on
// a remap or a Close that waits for the first.
func trimTx(tx *bolt.Tx) {
	if size := tx.Size(); size > 0 {
		mmaptrim.Drop(tx.DB().Info().Data, uintptr(size))
	}
}

// trimDB trims db's mapping from a read transaction of its own, for a
// caller that holds none.
func trimDB(db *bolt.DB) {
	_ = db.View(func(tx *bolt.Tx) error { trimTx(tx); return nil })
}
