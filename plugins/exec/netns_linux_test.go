package exec_test

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// netProbeArg makes this test binary, copied into a task's directory and
// run as the task, a network probe (netProbe) instead of the tests.
const netProbeArg = "gpulayer-test-netprobe"

func init() {
	if len(os.Args) > 1 && os.Args[1] == netProbeArg {
		os.Exit(netProbe(os.Stdout, os.Args[2:]))
	}
}

// netProbe dials each "network address" pair of targets ("tcp
// 127.0.0.1:80", "unix @name"), then a listener of its own on loopback,
// and prints a line for each: the target and "reached", or "refused"
// and why.
func netProbe(w io.Writer, targets []string) int {
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(w, "own loopback: cannot listen: %v\n", err)
		return 1
	}
	defer own.Close()
	targets = append(targets, "tcp", own.Addr().String())
	for i := 0; i+1 < len(targets); i += 2 {
		network, addr := targets[i], targets[i+1]
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			fmt.Fprintf(w, "%s %s refused: %v\n", network, addr, err)
			continue
		}
		_ = c.Close()
		fmt.Fprintf(w, "%s %s reached\n", network, addr)
	}
	return 0
}

// probeTask is a task, as uid, that runs this test binary as netProbe
// against targets, in a sandbox with the given network.
func probeTask(t *testing.T, uid int, network string, targets ...string) executor.Task {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	task := userTask(t, uid, &executor.Sandbox{Network: network}, `exec "$@"`)
	probe := filepath.Join(task.WorkDir, "probe")
	if err := os.WriteFile(probe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	task.Config = shell(`exec "$@"`, append([]string{probe, netProbeArg}, targets...)...)
	return task
}

// hostListeners opens what a task must not reach in isolation: a TCP
// listener on the host's loopback and an abstract Unix socket; it returns
// them as netProbe targets.
func hostListeners(t *testing.T) []string {
	t.Helper()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	abstract := fmt.Sprintf("@gpulayer-test-netns-%d-%d", os.Getpid(), time.Now().UnixNano())
	unix, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close() })
	return []string{"tcp", tcp.Addr().String(), "unix", abstract}
}

// The attack: a task shares the host's network namespace, so it reaches
// every port on the host's loopback (the agent's metrics, another task's
// server) and every abstract Unix socket (which no file mode guards). In
// an isolated network it reaches neither, and still has a loopback of its
// own; on the host's network (the default) it reaches both.
func TestSandboxNetwork(t *testing.T) {
	sandboxOnly(t)
	targets := hostListeners(t)
	hostTCP, abstract := "tcp "+targets[1], "unix "+targets[3]
	for i, tc := range []struct {
		network string
		reached bool
	}{
		{executor.SandboxNetworkIsolated, false},
		{executor.SandboxNetworkHost, true},
		{"", true},
	} {
		t.Run(cmp.Or(tc.network, "default"), func(t *testing.T) {
			stdout, stderr, res := run(t, sandboxed(), probeTask(t, 61470+i, tc.network, targets...))
			if res.ExitCode != 0 {
				t.Fatalf("%+v, stdout %q, stderr %q", res, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if len(lines) != 3 {
				t.Fatalf("probe said %q, want three lines", stdout)
			}
			for _, l := range lines[:2] {
				switch {
				case !strings.HasPrefix(l, hostTCP) && !strings.HasPrefix(l, abstract):
					t.Errorf("probe line %q names no target", l)
				case strings.HasSuffix(l, " reached") != tc.reached:
					t.Errorf("%s, want reached=%v", l, tc.reached)
				}
			}
			if !strings.HasSuffix(lines[2], " reached") {
				t.Errorf("the task's own loopback: %s", lines[2])
			}
		})
	}
}
