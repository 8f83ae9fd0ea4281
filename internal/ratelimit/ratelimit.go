// Package ratelimit keeps one token bucket (golang.org/x/time/rate) per
// key — a source address, a credential id — in bounded memory.
//
// An idle bucket refills to full, and a full bucket behaves exactly like a
// new one, so buckets that are full are dropped without changing any
// answer. Only when more than MaxKeys keys are busy at once (an attack from
// many addresses) are busy buckets dropped as well, oldest first; that
// forgives those keys part of their debt, and the bound on memory holds.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxKeys bounds the buckets a Keyed holds.
const DefaultMaxKeys = 65536

// sweepEvery is how many calls pass between sweeps of full buckets.
const sweepEvery = 4096

// Keyed limits each key to Rate events per second with bursts of Burst.
// It is safe for concurrent use. A nil *Keyed allows everything.
type Keyed struct {
	limit   rate.Limit
	burst   int
	maxKeys int

	mu      sync.Mutex
	buckets map[string]*bucket
	calls   int
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// New returns a limiter of r events per second per key with bursts of
// burst. r <= 0 returns nil: no limit.
func New(r float64, burst, maxKeys int) *Keyed {
	if r <= 0 {
		return nil
	}
	if burst < 1 {
		burst = max(1, int(math.Ceil(r)))
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Keyed{limit: rate.Limit(r), burst: burst, maxKeys: maxKeys, buckets: map[string]*bucket{}}
}

// Allow takes one event for key at now. When the bucket is empty it
// reports false and how long until an event would be allowed.
func (k *Keyed) Allow(key string, now time.Time) (bool, time.Duration) {
	if k == nil {
		return true, 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	if k.calls%sweepEvery == 0 || len(k.buckets) >= k.maxKeys {
		k.sweep(now)
	}
	b, ok := k.buckets[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(k.limit, k.burst)}
		k.buckets[key] = b
	}
	b.last = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Len is the number of buckets held (for tests).
func (k *Keyed) Len() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.buckets)
}

// sweep drops full buckets; if that is not enough, the least recently
// used busy ones, down to three quarters of the bound.
func (k *Keyed) sweep(now time.Time) {
	full := float64(k.burst)
	for key, b := range k.buckets {
		if b.lim.TokensAt(now) >= full {
			delete(k.buckets, key)
		}
	}
	target := k.maxKeys * 3 / 4
	if len(k.buckets) <= target {
		return
	}
	// Evict the oldest: find the cutoff time by sampling the ages.
	ages := make([]time.Time, 0, len(k.buckets))
	for _, b := range k.buckets {
		ages = append(ages, b.last)
	}
	cut := nthOldest(ages, len(k.buckets)-target)
	for key, b := range k.buckets {
		if len(k.buckets) <= target {
			break
		}
		if !b.last.After(cut) {
			delete(k.buckets, key)
		}
	}
}

// nthOldest returns the n-th smallest time (1-based) by quickselect.
func nthOldest(ts []time.Time, n int) time.Time {
	lo, hi := 0, len(ts)-1
	n--
	for lo < hi {
		p := ts[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for ts[i].Before(p) {
				i++
			}
			for ts[j].After(p) {
				j--
			}
			if i <= j {
				ts[i], ts[j] = ts[j], ts[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return ts[n]
		}
	}
	return ts[n]
}
