package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
)

const lease = 10 * time.Second

// holdResult runs Hold in the background.
func holdResult(b *leaseBook, id string, stop <-chan struct{}) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- b.Hold(context.Background(), id, stop) }()
	return ch
}

func nudged(t *testing.T, b *leaseBook) {
	t.Helper()
	select {
	case <-b.nudge:
	case <-time.After(10 * time.Second):
		t.Fatal("Hold did not ask for a heartbeat")
	}
}

func TestLeaseBookHold(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		// age is how long before now the assigning acquire was sent.
		age time.Duration
		// then is what happens once Hold waits: renew (a heartbeat
		// sent now is answered), cancel (the attempt is stopped), none.
		then  string
		want  error // nil: it holds
		waits bool
	}{
		{"a fresh assignment starts at once", time.Second, "none", nil, false},
		{"an attempt it was never told of starts at once", -1, "none", nil, false},
		{"an old assignment waits for a heartbeat that renews it", 6 * time.Second, "renew", nil, true},
		{"a lapsed assignment waits for a heartbeat that renews it", 30 * time.Second, "renew", nil, true},
		{"a lapsed assignment cancelled meanwhile does not start", 30 * time.Second, "cancel", errLeaseStopped, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewFake(start)
			b := newLeaseBook(clk)
			if c.age >= 0 {
				b.assigned("att", lease, start.Add(-c.age))
			}
			stop := make(chan struct{})
			res := holdResult(b, "att", stop)
			if c.waits {
				nudged(t, b)
				select {
				case err := <-res:
					t.Fatalf("Hold returned %v before any renewal", err)
				default:
				}
				switch c.then {
				case "renew":
					b.renewed([]string{"att"}, []string{"att"}, clk.Now())
				case "cancel":
					close(stop)
					// The heartbeat that cancelled it renews nothing.
					b.renewed(nil, []string{"att"}, clk.Now())
				}
			}
			select {
			case err := <-res:
				if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
					t.Fatalf("Hold = %v, want %v", err, c.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Hold did not return")
			}
		})
	}
}

// A heartbeat answered renews from the moment it was sent, not answered:
// one sent before a long pause renews little, and Hold asks again.
func TestLeaseBookRenewsFromTheSendTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	b := newLeaseBook(clk)
	b.assigned("att", lease, start)
	clk.Advance(20 * time.Second) // paused past the lease
	res := holdResult(b, "att", nil)
	nudged(t, b)
	b.renewed([]string{"att"}, []string{"att"}, start.Add(2*time.Second)) // sent before the pause
	nudged(t, b)
	select {
	case err := <-res:
		t.Fatalf("Hold = %v after a renewal that ended before now", err)
	default:
	}
	b.renewed([]string{"att"}, []string{"att"}, clk.Now())
	if err := <-res; err != nil {
		t.Fatalf("Hold = %v after a fresh renewal", err)
	}
}

// Attempts that no longer run are forgotten once their lease is long
// past; fresh assignments not yet running are kept.
func TestLeaseBookForgetsEndedAttempts(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	b := newLeaseBook(clk)
	b.assigned("old", lease, start)
	clk.Advance(time.Minute)
	b.assigned("new", lease, clk.Now())
	b.renewed(nil, nil, clk.Now())
	if _, ok := b.known["old"]; ok {
		t.Error("an ended attempt long past its lease is still kept")
	}
	if _, ok := b.known["new"]; !ok {
		t.Error("a fresh assignment was forgotten before it ran")
	}
}
