package coordinatortest

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
)

// RaftTimeout is the heartbeat, election and leader lease timeout of
// every coordinator a test starts, whatever the project's defaults (which
// are tuned for a quick failover on a machine that is not overloaded): a
// test runs beside many others on a loaded CI machine, where tighter
// timeouts would elect in the middle of a test that expects none. A
// test's Tweak may set others.
const RaftTimeout = 500 * time.Millisecond

// pinRaftTimeouts gives cfg the test Raft timeouts.
func pinRaftTimeouts(cfg *coordinator.Config) {
	cfg.RaftHeartbeatTimeout = RaftTimeout
	cfg.RaftElectionTimeout = RaftTimeout
	cfg.RaftLeaderLeaseTimeout = RaftTimeout
}
