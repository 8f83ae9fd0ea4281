//go:build linux

package agentfaults

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// binary is the gpulayer binary, built once for the package: the agents
// under test run it, and it re-executes itself as the exec plugin.
var binary string

// TestMain builds the gpulayer binary; started again by
// coordinatortest (Options.Processes), the test binary is a coordinator
// instead.
func TestMain(m *testing.M) {
	coordinatortest.ServeChild()
	dir, err := os.MkdirTemp("", "gpulayer-agentfaults-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "gpulayer")
	build := exec.Command("go", "build", "-o", binary, "github.com/gpulayer/gpulayer/cmd/gpulayer")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build gpulayer: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
