// Package mprecord writes and reads the records of a snapshot's large
// tables as MessagePack, without reflection: the bytes go-msgpack's
// canonical handle writes for the same record (a map of the JSON field
// names in name order, omitempty fields left out when empty, times as the
// timestamp extension), so that snapshots keep their format whichever
// side wrote or reads a record.
//
// A record type is declared once, as a Codec of its fields (New, with
// Str, Int, Time, List and the other field constructors): each field
// says its name, how it is written (Always, or OmitEmpty) and how it is
// read back (Interned or not). A Writer writes records; a Reader reads
// them with one restore's interner, so that equal strings across records
// share one copy. The reader takes only what the writer writes: anything
// else fails the record (Decode's ok), and the caller decodes it with
// go-msgpack instead, which decides what it means.
//
// The package knows no record type: the snapshot codec declares its
// tables' codecs (coordinator/state/snapcodec, records.go) and streams the
// records (encode.go, decode.go).
package mprecord

// MaxInitLen bounds what a reader allocates ahead for one collection on
// the word of its header: no more than go-msgpack's handle is set to
// (the snapshot's handle uses it too), so a claimed length costs no more
// than the elements actually sent.
const MaxInitLen = 1 << 10
