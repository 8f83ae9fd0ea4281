package telemetry

import (
	"log"
	"log/slog"
)

// ErrorLog is a *log.Logger (what net/http.Server.ErrorLog and promhttp
// take) that writes each line to l at level: TLS handshake failures,
// panics in handlers and the like then reach the structured log instead of
// stderr.
func ErrorLog(l *slog.Logger, level slog.Level) *log.Logger {
	return slog.NewLogLogger(l.Handler(), level)
}
