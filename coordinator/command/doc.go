// Package command defines the Raft log entries of the coordinator: typed,
// versioned messages, each a one-byte type followed by a JSON body.
//
// Type numbers are append-only: a number once used is never reused or
// changed in meaning, so an old log replays the same way forever. The leader
// stamps every command with the time (Now) and any random identifiers before
// it is proposed, so that applying a command never reads the clock or a
// random source.
//
// registry.go is the one list of the commands: Decode reads it, and the
// state machine checks its handlers against it. A batch's entries are
// decoded here too (Unbatch), one by one.
package command
