package pluginhost

import (
	"log/slog"
	"slices"
	"testing"
)

// Without probing, a built-in executor that needs something of the node
// (the container executor, a Docker daemon) is not advertised; those that
// need nothing are.
func TestUnprobedBuiltinsNeedingTheNodeAreLeftOut(t *testing.T) {
	got := usableBuiltins([]string{"container", "exec"}, false, slog.New(slog.DiscardHandler))
	if !slices.Equal(got, []string{"exec"}) {
		t.Errorf("got %v, want [exec]", got)
	}
}
