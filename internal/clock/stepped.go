package clock

import (
	"sync/atomic"
	"time"
)

// Stepped is a Clock whose reading can jump, as a host's clock does when
// NTP or an operator steps it. Now is the base clock's reading plus the
// sum of every step; timers still fire after their real durations.
//
// A step moves the reading that every later Now returns, monotonic part
// included, so code that subtracts two readings taken across a step sees
// the jump. That is harsher than a real step, which Go's monotonic clock
// hides from such differences.
type Stepped struct {
	base   Clock
	offset atomic.Int64
}

var _ Clock = (*Stepped)(nil)

// NewStepped returns a clock that reads base until stepped.
func NewStepped(base Clock) *Stepped { return &Stepped{base: base} }

// Step moves the reading by d (negative: back in time).
func (s *Stepped) Step(d time.Duration) { s.offset.Add(int64(d)) }

// Offset is the sum of the steps so far.
func (s *Stepped) Offset() time.Duration { return time.Duration(s.offset.Load()) }

// Now returns the base reading moved by the steps.
func (s *Stepped) Now() time.Time { return s.base.Now().Add(s.Offset()) }

// After waits d on the base clock.
func (s *Stepped) After(d time.Duration) <-chan time.Time { return s.base.After(d) }

// NewTicker ticks every d on the base clock.
func (s *Stepped) NewTicker(d time.Duration) Ticker { return s.base.NewTicker(d) }
