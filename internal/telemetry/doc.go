// Package telemetry holds what every gpulayer metrics endpoint shares: the
// process-wide registry that Raft's own metrics (through go-metrics,
// renamed into well-formed families by a sink of this package), the Go
// runtime and the process report to, the /metrics handler that serves a
// component's registry together with it, and the adapter that sends
// net/http's error log to slog.
package telemetry
