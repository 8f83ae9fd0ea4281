// Package snapcodec writes the state's tables as a snapshot and reads a
// snapshot back, without knowing the store: Encode takes the tables as a
// capture holds them (Tables), Decode returns the records a snapshot
// holds (Image), and the state (coordinator/state) checks and indexes
// them (its load). The large tables' records are written and read
// without reflection, each declared once as a table of its fields
// (records.go, package mprecord); the small ones go through go-msgpack.
//
// Nothing here checks what the records mean together: a snapshot whose
// records are well formed decodes, and the state refuses one whose
// records contradict each other.
package snapcodec

import (
	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/gpulayer/gpulayer/coordinator/state/mprecord"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// A snapshot (format version 3) is a fixed header, the magic then one
// version byte, followed by a stream of records. Each record is its kind
// (one byte), the length of its body (an unsigned varint) and the body:
// one MessagePack value, field names as in the JSON form. The first record
// is the meta record; the last is RecEnd, a kind byte alone, after which
// nothing may follow. Records are written and read one at a time, so
// neither side holds the whole encoding; a body is decoded from its own
// bytes, so a length a hostile snapshot claims inside one can make the
// decoder allocate no more than the body it actually sent.
//
// Version 3 added the finish record (RecFinish): a remembered finish whose
// task is, still, the table's record names that task instead of carrying
// a second copy of it. Version 2 snapshots, without it, and version 1
// snapshots, one JSON document, are still read (Decode).
const (
	Magic   = "GPLSNAP"
	Version = 3
	// oldestRecords is the oldest version written in records.
	oldestRecords = 2
)

// Record kinds. Numbers are part of the format: never reuse one.
const (
	RecEnd uint8 = iota
	RecMeta
	RecCredential
	RecWorker
	RecJob
	RecTask
	RecLog // task output, before it left the store: never written, refused
	RecSubmission
	RecIdempotency
	RecNode
	RecGroup
	RecCluster
	RecEnrollment
	RecArtifact
	RecAudit
	RecRefusal
	RecFinish // version 3 on
	RecTeam
	RecUsage
	RecUsageTotal
)

// Meta is the store's scalar state.
type Meta struct {
	BootstrapGeneration int    `json:"bootstrap_generation"`
	Seq                 uint64 `json:"seq"`
	AuditSeq            uint64 `json:"audit_seq"`
}

// SubmissionRecord is one remembered finish.
type SubmissionRecord struct {
	Key        string            `json:"key"`
	Submission record.Submission `json:"submission"`
}

// Finish is one remembered finish whose task is the table's record,
// as the finish left it: the task is named, not copied. Its key is
// Task + "/" + Submission.
type Finish struct {
	Task       string `json:"task"`
	Submission string `json:"submission"`
	BodyHash   string `json:"body_hash"`
}

// Pair is one entry of a string to string table.
type Pair struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MaxRecordBytes bounds one record's body. The largest record is a task
// with its finish's output.
const MaxRecordBytes = 64 << 20

// Handle is the go-msgpack handle the snapshot's records are written
// and read with.
func Handle() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.WriteExt = true                  // binary as bin, times as the timestamp extension
	h.Canonical = true                 // map keys sorted: the same state, the same bytes
	h.MaxInitLen = mprecord.MaxInitLen // a hostile snapshot cannot make it reserve more than it sends
	return h
}
