package cluster

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// The mechanism of hashicorp/raft's pipeline stall, on two real network
// transports over loopback: once nothing consumes a pipeline's answers
// (raft's decoder returned on a refusal), its reader fills the answer
// buffer and then blocks, and a send blocks behind it. Unguarded, the
// send never returns; guarded, it fails after the stall limit with the
// pipeline closed, so raft's replication goes on without it.
func TestStalledPipelineIsClosed(t *testing.T) {
	leader, follower := transportPair(t)
	guarded := guardedTransport{NetworkTransport: leader, stall: 300 * time.Millisecond}
	p, err := guarded.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// Nobody reads p.Consumer(): once the pipeline's reader holds an
	// answer it cannot hand over (with raft's default of two RPCs in
	// flight, after the first send), a send can no longer be handed over.
	var sendErr error
	sent := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sent < 1000 {
			if _, sendErr = p.AppendEntries(&raft.AppendEntriesRequest{Term: 1}, &raft.AppendEntriesResponse{}); sendErr != nil {
				return
			}
			sent++
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a send into a stalled pipeline never returned")
	}
	if !errors.Is(sendErr, errPipelineStalled) {
		t.Fatalf("after %d sends: %v, want the stall error", sent, sendErr)
	}
	if sent < 1 || sent >= 1000 {
		t.Fatalf("%d sends went through before the stall, want what the pipeline holds", sent)
	}
	if _, err := p.AppendEntries(&raft.AppendEntriesRequest{Term: 1}, &raft.AppendEntriesResponse{}); err == nil {
		t.Fatal("the stalled pipeline still takes requests: it was not closed")
	}
}

// Without the guard the same send does not return: the stall the guard
// exists for (the pipeline is closed here to end the test).
func TestUnguardedPipelineStalls(t *testing.T) {
	leader, follower := transportPair(t)
	p, err := leader.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan error, 1)
	go func() {
		for {
			if _, err := p.AppendEntries(&raft.AppendEntriesRequest{Term: 1}, &raft.AppendEntriesResponse{}); err != nil {
				returned <- err
				return
			}
		}
	}()
	select {
	case err := <-returned:
		t.Fatalf("an unguarded send returned (%v): raft's pipeline no longer stalls, and the guard may go", err)
	case <-time.After(time.Second):
	}
	p.Close()
	if err := <-returned; !errors.Is(err, raft.ErrPipelineShutdown) {
		t.Fatalf("after Close: %v", err)
	}
}

// transportPair is a leader's network transport and a follower's on
// loopback, the follower answering every AppendEntries at once; both are
// closed when the test ends.
func transportPair(t *testing.T) (leader, follower *raft.NetworkTransport) {
	t.Helper()
	open := func() *raft.NetworkTransport {
		tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 2, time.Second, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	follower = open()
	go func() {
		for rpc := range follower.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: true}, nil)
		}
	}()
	return open(), follower
}
