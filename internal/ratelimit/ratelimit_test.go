package ratelimit

import (
	"fmt"
	"testing"
	"time"
)

func TestBurstThenRate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := New(2, 3, 0)
	for i := range 3 {
		if ok, _ := k.Allow("a", now); !ok {
			t.Fatalf("event %d of the burst refused", i)
		}
	}
	ok, wait := k.Allow("a", now)
	if ok || wait <= 0 || wait > time.Second {
		t.Fatalf("over the burst: ok=%v wait=%v, want refused with a wait of at most 1s", ok, wait)
	}
	if ok, _ := k.Allow("b", now); !ok {
		t.Fatal("another key shares the bucket")
	}
	if ok, _ := k.Allow("a", now.Add(wait)); !ok {
		t.Fatal("refused after the announced wait")
	}
}

func TestNilAndZeroAllowEverything(t *testing.T) {
	var k *Keyed
	if ok, _ := k.Allow("x", time.Now()); !ok {
		t.Fatal("nil limiter refused")
	}
	if New(0, 10, 0) != nil || New(-1, 10, 0) != nil {
		t.Fatal("a rate of 0 or less must mean no limit")
	}
}

func TestMemoryIsBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := New(1, 1, 100)
	for i := range 10_000 {
		k.Allow(fmt.Sprintf("src-%d", i), now.Add(time.Duration(i)*time.Microsecond))
		if n := k.Len(); n > 100 {
			t.Fatalf("after %d keys the limiter holds %d buckets, over its bound of 100", i+1, n)
		}
	}
	// Full buckets are dropped losslessly: after a second every bucket has
	// refilled, and one sweep empties the map.
	later := now.Add(time.Minute)
	k.mu.Lock()
	k.sweep(later)
	k.mu.Unlock()
	if n := k.Len(); n != 0 {
		t.Fatalf("%d buckets left after they all refilled", n)
	}
}
