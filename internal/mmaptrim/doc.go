// Package mmaptrim keeps a bbolt file's read-only shared mapping small in
// resident memory. Every page read through such a mapping stays in the
// process's page tables, so resident memory grows with the volume read
// although the pages are the kernel's page cache; dropping the page-table
// entries (madvise MADV_DONTNEED on Linux, nothing elsewhere) leaves the
// data in the page cache, mapped again at the next read.
//
// The caller must make sure the mapping does not move while it is
// dropped: bbolt remaps only while a write transaction commits a grown
// file, or when it closes.
package mmaptrim
