// Package outputstore keeps task output in a bbolt file in the
// coordinator's data dir (output.db), as the state store's OutputStore.
//
// The file is a cache of the Raft log, not a second durable copy: it is
// written without fsync (NoSync, NoFreelistSync) and emptied when it is
// opened, because on every start Raft restores the latest snapshot (whose
// output section rebuilds the file) and replays the log after it (whose
// AppendLogs commands append again). A snapshot restore writes the new
// contents to a file beside it (output.db.next-N) and swaps it in only once
// the whole section decoded; the file it replaces stays open, nameless,
// until the last capture streaming from it is released (generation.go).
//
// Layout: one bucket, "records", holding every record as json.Marshal
// writes it (a restore stores a section's lines as they come only when
// they hold exactly that, line.go; a capture writes records out as they
// are, snapshot.go) under a key that is its task id (escaped, so that no
// id is a prefix of another's keys) and its index, 8 bytes big-endian
// (key.go). Keys sort as task id then index, so a task's records lie
// together, in order, and a snapshot streams them in that order; a
// restore, whose section comes in that order, appends at the end. Each
// task's record count is kept in memory, not in the file. Memory does not
// grow with the output held: records are read from the file a page at a
// time, and a snapshot streams from a read transaction (bbolt's
// consistent view) without copying.
package outputstore
