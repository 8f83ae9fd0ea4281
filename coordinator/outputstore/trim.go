package outputstore

import bolt "go.etcd.io/bbolt"

// bbolt reads the file through a read-only shared mapping, and every
// page it reads (a leaf copied when a task's bucket grows, records served
// to a reader or streamed into a snapshot) stays in this process's page
// tables: resident memory would grow with the output held, although those
// pages are the kernel's page cache and cost the heap nothing. After each
// trimBytes of output written or read, the store drops its mapping's page
// table entries (madvise MADV_DONTNEED, trim_linux.go): the pages stay in
// the page cache, and the next read of one maps it again.
const trimBytes = 4 << 20

// touch counts n bytes read or written through the mapping and reports
// whether a trim is due.
func (s *Store) touch(n int) bool { return s.touched.Add(int64(n)) >= trimBytes }

// trimLocked drops the resident pages of db's mapping. The caller holds
// writeMu: no write transaction, the only thing that remaps the file,
// runs meanwhile, so the mapping's address and extent hold still.
func (s *Store) trimLocked(db *bolt.DB) {
	s.touched.Store(0)
	var size int64
	if err := db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil || size <= 0 {
		return
	}
	// tx.Size is the high-water mark of the pages in use, all of which
	// bbolt keeps mapped: the range never reaches past the mapping.
	dropPages(db.Info().Data, uintptr(size))
}

// maybeTrim trims after reads, if a trim is due and no write holds the
// lock (a snapshot's read transaction may be what that write waits for).
func (s *Store) maybeTrim(db *bolt.DB, n int) {
	if !s.touch(n) || !s.writeMu.TryLock() {
		return
	}
	defer s.writeMu.Unlock()
	s.trimLocked(db)
}
