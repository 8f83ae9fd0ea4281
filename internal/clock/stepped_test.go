package clock

import (
	"testing"
	"time"
)

func TestSteppedMovesTheReadingNotTheTimers(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	base := NewFake(start)
	s := NewStepped(base)
	if got := s.Now(); !got.Equal(start) {
		t.Fatalf("unstepped reading %v, want %v", got, start)
	}
	s.Step(-90 * time.Second)
	s.Step(30 * time.Second)
	if got, want := s.Now(), start.Add(-time.Minute); !got.Equal(want) {
		t.Fatalf("after steps of -90 s and +30 s: %v, want %v", got, want)
	}
	if s.Offset() != -time.Minute {
		t.Fatalf("offset %v", s.Offset())
	}
	ch := s.After(time.Second)
	s.Step(time.Hour) // a step fires no timer
	select {
	case <-ch:
		t.Fatal("a step fired a timer")
	default:
	}
	base.Advance(time.Second)
	select {
	case <-ch:
	default:
		t.Fatal("the timer did not fire after its duration on the base clock")
	}
}
