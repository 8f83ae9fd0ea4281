package clock

import (
	"testing"
	"time"
)

func TestFakeAfterAndTicker(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFake(start)
	after := f.After(time.Second)
	tick := f.NewTicker(500 * time.Millisecond)
	if f.Waiters() != 2 {
		t.Fatalf("waiters = %d, want 2", f.Waiters())
	}
	f.Advance(400 * time.Millisecond)
	select {
	case <-after:
		t.Fatal("after fired early")
	case <-tick.C():
		t.Fatal("ticker fired early")
	default:
	}
	f.Advance(100 * time.Millisecond)
	if got := <-tick.C(); !got.Equal(start.Add(500 * time.Millisecond)) {
		t.Fatalf("tick at %v", got)
	}
	f.Advance(500 * time.Millisecond)
	<-after
	<-tick.C()
	tick.Stop()
	f.Advance(time.Second)
	select {
	case <-tick.C():
		t.Fatal("stopped ticker fired")
	default:
	}
	if f.Waiters() != 0 {
		t.Fatalf("waiters after stop = %d", f.Waiters())
	}
	if !f.Now().Equal(start.Add(2 * time.Second)) {
		t.Fatalf("now = %v", f.Now())
	}
}
