package outputstore

import (
	bolt "go.etcd.io/bbolt"

	"github.com/gpulayer/gpulayer/coordinator/state"
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
}

// restoreBatchBytes bounds one transaction of a restore.
const restoreBatchBytes = 4 << 20

// add appends r to task's records.
func (ld *loader) add(task string, r state.LogRecord) error {
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
	if err := putRecord(ld.b, recordKey(task, uint64(n)), r); err != nil {
		return err
	}
	ld.counts[task] = n + 1
	ld.size += len(r.Data) + 64
	if ld.size >= restoreBatchBytes {
		return ld.commit()
	}
	return nil
}

// commit commits the open transaction, if any.
func (ld *loader) commit() error {
	if ld.tx == nil {
		return nil
	}
	err := ld.tx.Commit()
	ld.tx, ld.b = nil, nil
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
		ld.tx, ld.b = nil, nil
	}
}
