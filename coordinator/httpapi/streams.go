package httpapi

import "time"

// StreamLimits bound a following log stream (GET /v1/jobs/{id}/logs with
// follow=1). A zero field takes the default.
type StreamLimits struct {
	// WriteTimeout is how long one write may take: a client that stops
	// reading fills its socket buffers, the write blocks, and past this
	// the stream is closed.
	WriteTimeout time.Duration
	// MaxLife is how long one stream stays open; the client reconnects
	// for more (the SDK does, skipping the entries it already has).
	MaxLife time.Duration
}

// Default stream limits.
const (
	DefaultStreamWriteTimeout = 30 * time.Second
	DefaultStreamMaxLife      = time.Hour
)

func (l StreamLimits) withDefaults() StreamLimits {
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultStreamWriteTimeout
	}
	if l.MaxLife <= 0 {
		l.MaxLife = DefaultStreamMaxLife
	}
	return l
}
