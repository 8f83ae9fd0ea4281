// Package spool keeps an agent's attempt reports on disk until a
// coordinator acknowledges them.
//
// When an attempt ends, the agent writes what it has to report (a finish
// with its exit code, output and artifacts' digests, or a failure with its
// reason) into the spool before it tries to send it. The record survives
// a quorum loss of any length and an agent restart: a coordinator that
// cannot be reached delays the report, it never loses it. Each record is
// one file, written whole (temporary file, fsync, rename, fsync of the
// directory), so a crash leaves the old set of records or the new one.
//
// The spool is bounded by a number of records and a number of bytes.
// Reaching a bound never drops a report: Put always keeps what it is
// given, and Full tells the agent to take no new task until deliveries
// have made room. Since the agent runs a fixed number of tasks at once,
// the spool holds at most its bound plus that many records.
package spool
