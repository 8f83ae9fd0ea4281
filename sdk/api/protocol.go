package api

import "time"

// Protocol header and version every /v1/ request (except /v1/status/*) carries.
const (
	ProtocolHeader  = "X-GpuLayer-Protocol"
	ProtocolVersion = "1"
)

// HeaderOutcome, on an error answer, says OutcomeUnknown when the write
// may have been applied all the same (leadership lost while it committed,
// the leader's answer lost on the way back): a client resends it only if
// the request is idempotent (a request id, a submission id, an
// idempotency key).
const (
	HeaderOutcome  = "X-GpuLayer-Outcome"
	OutcomeUnknown = "unknown"
)

// Body caps.
const (
	MaxJSONBody     = 16 << 20
	MaxArtifactBody = 2 << 30
	// MaxWaitSeconds bounds an acquire long poll.
	MaxWaitSeconds = 30
)

// Credential prefixes.
const (
	PrefixClient   = "glc"
	PrefixJoin     = "glj"
	PrefixInstance = "gli"
	PrefixWorker   = "glw"
)

// TimeFormat is how every timestamp travels: RFC 3339 in UTC with milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t in the protocol's timestamp format (UTC).
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(TimeFormat)
}

// ParseTime parses a protocol timestamp.
func ParseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}
