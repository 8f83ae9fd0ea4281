package integration

import (
	"fmt"
	"os"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/plugins"
)

// pluginArg makes this test binary act as a built-in plugin when the plugin
// host re-executes it, as the real binary does with `gpulayer plugin exec`.
const pluginArg = "gpulayer-test-plugin"

func TestMain(m *testing.M) {
	coordinatortest.ServeChild() // a coordinator process of a test's cluster
	if len(os.Args) == 3 && os.Args[1] == pluginArg {
		if err := plugins.ServeBuiltin(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
