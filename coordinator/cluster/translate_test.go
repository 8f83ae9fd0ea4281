package cluster

import (
	"errors"
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
