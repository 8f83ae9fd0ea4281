package outputstore

import (
	bolt "go.etcd.io/bbolt"
)

// loader writes a restore's records into its staging file, which no one
// else reads or writes, in write transactions of about restoreBatchBytes
// each (a write transaction holds its dirty pages in memory until it
// commits).
type loader struct {
	g      *generation
	counts map[string]int // each task's records so far

	tx   *bolt.Tx     // the open transaction; nil between them
	b    *bolt.Bucket // tx's records
	size int          // bytes written in tx, roughly

	// slab holds the values put in tx, which bbolt reads until tx
	// commits: one allocation for many small records.
	slab []byte
}

// slabBytes is the size of a slab of values.
const slabBytes = 256 << 10

// restoreBatchBytes bounds one transaction of a restore.
const restoreBatchBytes = 4 << 20

// add appends to task's records the record whose stored form is "{"
// then record (sectionReader.next).
func (ld *loader) add(task string, record []byte) error {
	if ld.tx == nil {
		tx, err := ld.g.db.Begin(true)
		if err != nil {
			return err
		}
		ld.tx, ld.b = tx, tx.Bucket(recordsBucket)
		// A section lists tasks in byte order of id, which is the keys'
		// order: records go on at the end, whose pages can be filled.
		ld.b.FillPercent = 1
	}
	n := ld.counts[task]
	k := recordKey(task, uint64(n))
	if err := ld.b.Put(k, ld.value(record)); err != nil {
		return err
	}
	ld.counts[task] = n + 1
	ld.size += len(k) + 1 + len(record)
	if ld.size >= restoreBatchBytes {
		return ld.commit()
	}
	return nil
}

// value copies "{" then record into the slab.
func (ld *loader) value(record []byte) []byte {
	n := 1 + len(record)
	if n > slabBytes/4 {
		return append(append(make([]byte, 0, n), '{'), record...)
	}
	if cap(ld.slab)-len(ld.slab) < n {
		ld.slab = make([]byte, 0, slabBytes)
	}
	start := len(ld.slab)
	ld.slab = append(append(ld.slab, '{'), record...)
	return ld.slab[start:len(ld.slab):len(ld.slab)]
}

// commit commits the open transaction, if any.
func (ld *loader) commit() error {
	if ld.tx == nil {
		return nil
	}
	err := ld.tx.Commit()
	ld.tx, ld.b, ld.slab = nil, nil, nil
	if err != nil {
		return err
	}
	if ld.g.trimDue(ld.size) {
		trimDB(ld.g.db)
	}
	ld.size = 0
	return nil
}

// abort rolls the open transaction back, if any.
func (ld *loader) abort() {
	if ld.tx != nil {
		_ = ld.tx.Rollback()
		ld.tx, ld.b, ld.slab = nil, nil, nil
	}
}
