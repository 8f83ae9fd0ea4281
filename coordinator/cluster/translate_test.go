package cluster

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
)

// A write whose leadership was lost while it committed is not-leader and
// of unknown outcome; one refused before it was appended is only
// not-leader.
func TestTranslateMarksUnknownOutcomes(t *testing.T) {
	cases := []struct {
		in                 error
		notLeader, unknown bool
	}{
		{raft.ErrLeadershipLost, true, true},
		{raft.ErrNotLeader, true, false},
		{raft.ErrLeadershipTransferInProgress, true, false},
	}
	for _, c := range cases {
		got := translate(c.in)
		if errors.Is(got, ErrNotLeader) != c.notLeader || errors.Is(got, ErrOutcomeUnknown) != c.unknown {
			t.Errorf("translate(%v) = %v: not leader %v, unknown %v; want %v, %v", c.in, got, errors.Is(got, ErrNotLeader), errors.Is(got, ErrOutcomeUnknown), c.notLeader, c.unknown)
		}
	}
}

// A proposal's future may also fail because the leader could not write
// its own log: the entry may be on its disk (an fsync error) and commit
// later, so the outcome is unknown; an enqueue timeout never reached the
// log.
func TestTranslateApplyStoreErrors(t *testing.T) {
	cases := []struct {
		in                 error
		notLeader, unknown bool
		shutdown           bool
	}{
		{fmt.Errorf("faultstore: fsync error: %w", syscall.EIO), true, true, false},
		{syscall.ENOSPC, true, true, false},
		{raft.ErrEnqueueTimeout, true, false, false},
		{raft.ErrLeadershipLost, true, true, false},
		{raft.ErrNotLeader, true, false, false},
		{raft.ErrRaftShutdown, false, false, true},
	}
	for _, c := range cases {
		got := translateApply(c.in)
		if errors.Is(got, ErrNotLeader) != c.notLeader || errors.Is(got, ErrOutcomeUnknown) != c.unknown || errors.Is(got, ErrShutdown) != c.shutdown {
			t.Errorf("translateApply(%v) = %v: not leader %v, unknown %v, shutdown %v", c.in, got, errors.Is(got, ErrNotLeader), errors.Is(got, ErrOutcomeUnknown), errors.Is(got, ErrShutdown))
		}
	}
}
