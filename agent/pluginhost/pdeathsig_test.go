//go:build linux

package pluginhost_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An agent that dies without closing its plugins (SIGKILL, a crash)
// takes them with it, and with them every process of their tasks, a task's
// background process included: the plugin gets SIGTERM as its
// parent-death signal and kills its tasks' process groups before it
// exits. Before, the plugin and its tasks kept running as orphans while
// the coordinator handed the tasks out again.
func TestPluginAndTasksDieWithTheAgent(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], agentArg, dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			exited <- fmt.Errorf("helper said %q", line)
			return
		}
		exited <- nil
	}()
	select {
	case err := <-exited:
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("%v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the helper agent never got its task running\n%s", stderr.String())
	}
	plugin := 0
	for _, c := range childrenOf(cmd.Process.Pid) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c)); strings.Contains(string(b), serveArg) {
			plugin = c
		}
	}
	if plugin == 0 {
		_ = cmd.Process.Kill()
		t.Fatal("no plugin process below the helper agent")
	}
	// The task's processes, as the host numbers them: in a sandbox its
	// init, the task and its child; without one, the task and its child.
	pids := map[string]int{"plugin": plugin}
	for i, pid := range descendantsOf(plugin) {
		pids["task process "+strconv.Itoa(i)] = pid
	}
	if len(pids) < 3 {
		_ = cmd.Process.Kill()
		t.Fatalf("below the plugin: %v, want the task and its child at least", pids)
	}
	t.Cleanup(func() { // whatever the outcome, leave nothing behind
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for what, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("10 s after its agent's SIGKILL the %s process %d still runs (all: %v)", what, pid, pids)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// descendantsOf lists pid's children, their children and so on.
func descendantsOf(pid int) []int {
	var out []int
	for _, c := range childrenOf(pid) {
		out = append(append(out, c), descendantsOf(c)...)
	}
	return out
}

// childrenOf lists pid's children from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// alive reports whether pid runs and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
