package execsession

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
)

func spec(task, worker, cred string) Spec {
	return Spec{TaskID: task, WorkerID: worker, CredentialID: cred, Command: []string{"true"}}
}

func TestOpenBoundsPerTaskAndPerClient(t *testing.T) {
	r := New(clock.NewFake(time.Unix(0, 0)), Limits{PerTask: 2, PerClient: 3})
	for _, c := range []struct {
		task, cred string
		want       error
	}{
		{"t1", "c1", nil},
		{"t1", "c2", nil},
		{"t1", "c3", ErrTooManyForTask},
		{"t2", "c1", nil},
		{"t3", "c1", nil},
		{"t4", "c1", ErrTooManyForClient},
	} {
		_, err := r.Open(spec(c.task, "w1", c.cred))
		if !errors.Is(err, c.want) {
			t.Fatalf("open %s by %s: %v, want %v", c.task, c.cred, err, c.want)
		}
	}
	if r.Len() != 4 {
		t.Fatalf("%d sessions, want 4", r.Len())
	}
}

func TestClaimsAreTheirOwnersOnceAndExpire(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	r := New(clk, Limits{Attach: 10 * time.Second})
	s, err := r.Open(spec("t1", "w1", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Offers("w2"); len(got) != 0 {
		t.Fatalf("another worker is offered %v", got)
	}
	if got := r.Offers("w1"); len(got) != 1 || got[0].ID != s.ID || got[0].TaskID != "t1" || got[0].URL != AgentPath(s.ID) {
		t.Fatalf("offers %v", got)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want error
	}{
		{"other client", func() error { _, err := r.ClaimClient(s.ID, "c2"); return err }, ErrUnknown},
		{"other worker", func() error { _, err := r.ClaimAgent(s.ID, "w2"); return err }, ErrUnknown},
		{"unknown id", func() error { _, err := r.ClaimClient("nope", "c1"); return err }, ErrUnknown},
		{"client", func() error { _, err := r.ClaimClient(s.ID, "c1"); return err }, nil},
		{"client again", func() error { _, err := r.ClaimClient(s.ID, "c1"); return err }, ErrUnknown},
	} {
		if err := c.do(); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	clk.Advance(11 * time.Second)
	if got := r.Offers("w1"); len(got) != 0 {
		t.Fatalf("an expired session is offered: %v", got)
	}
	if _, err := r.ClaimAgent(s.ID, "w1"); !errors.Is(err, ErrUnknown) {
		t.Fatalf("claim of an expired session: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("an expired session is not ended")
	}
}

func TestAwaitAgentExpires(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	r := New(clk, Limits{Attach: 5 * time.Second})
	s, _ := r.Open(spec("t1", "w1", "c1"))
	got := make(chan error, 1)
	go func() {
		_, err := s.AwaitAgent(context.Background())
		got <- err
	}()
	for clk.Waiters() == 0 {
		time.Sleep(time.Millisecond) // polling for the waiter to register, not synchronising the result
	}
	clk.Advance(6 * time.Second)
	select {
	case err := <-got:
		if !errors.Is(err, ErrExpired) {
			t.Fatalf("await: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AwaitAgent did not return at the deadline")
	}
}
