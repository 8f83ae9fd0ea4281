package agent

import (
	"context"
	"time"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// startRetryMax caps the pause between two tries to reach the
// coordinators at start. It is short: an agent restarted during an outage
// may hold reports whose leases a new leader keeps only for a grace
// (docs/reliability.md), so it must be back soon after the quorum is.
const startRetryMax = 5 * time.Second

// identifyPatiently runs identify until it succeeds or fails for a reason
// that retrying cannot fix. While no coordinator can be reached (they are
// starting, or the network is not up yet) it says so at each try, with
// the next pause, growing from one second to startRetryMax: an agent
// started before its coordinators waits for them instead of exiting.
func (a *Agent) identifyPatiently(ctx context.Context) error {
	pause := time.Second
	for try := 1; ; try++ {
		// Each try gives up as soon as no coordinator takes a connection,
		// so that the agent says so at once rather than after the client's
		// own retries.
		err := a.identify(client.FailFast(ctx))
		if err == nil || !client.Unavailable(err) || ctx.Err() != nil {
			return err
		}
		a.log.Warn("no coordinator reachable yet; trying again", "coordinators", a.cfg.Coordinators, "try", try, "retry_in", pause, "error", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-a.cfg.Clock.After(pause):
		}
		pause = min(2*pause, startRetryMax)
	}
}
