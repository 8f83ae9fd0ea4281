package pluginhost

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpulayer/gpulayer/plugins"
)

// probeTimeout bounds each built-in executor's check at start.
const probeTimeout = 3 * time.Second

// usableBuiltins keeps the names of the built-in executors this node can
// run: those that need nothing of it, and, when probe is set, those whose
// check passes (plugins.Usable); it says which it leaves out and why.
func usableBuiltins(names []string, probe bool, log *slog.Logger) []string {
	var out []string
	for _, n := range names {
		if !plugins.NeedsProbe(n) {
			out = append(out, n)
			continue
		}
		if !probe {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		err := plugins.Usable(ctx, n)
		cancel()
		if err != nil {
			log.Info("built-in executor not advertised: this node cannot run it", "executor", n, "reason", err)
			continue
		}
		out = append(out, n)
	}
	return out
}
