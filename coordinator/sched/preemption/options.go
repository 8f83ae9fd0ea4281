package preemption

import "time"

// Options are the leader's preemption settings.
type Options struct {
	// MinRuntime is how long an attempt runs before it may be preempted
	// (the storm guard).
	MinRuntime time.Duration
	// HoldSlack is how long, past the longest grace of its victims, the
	// devices a preemption frees stay held for its task.
	HoldSlack time.Duration
	// MaxCandidates bounds the pending tasks one plan considers, highest
	// priority then oldest first.
	MaxCandidates int
}

// Defaults of Options.
const (
	DefaultMinRuntime    = 5 * time.Minute
	DefaultHoldSlack     = time.Minute
	DefaultMaxCandidates = 64
)

// WithDefaults fills what o leaves zero: no negative minimum runtime, a
// hold slack and a bound on the candidates.
func (o Options) WithDefaults() Options {
	if o.MinRuntime < 0 {
		o.MinRuntime = 0
	}
	if o.HoldSlack <= 0 {
		o.HoldSlack = DefaultHoldSlack
	}
	if o.MaxCandidates <= 0 {
		o.MaxCandidates = DefaultMaxCandidates
	}
	return o
}
