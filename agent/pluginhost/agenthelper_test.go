package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/agent/pluginhost"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// agentArg makes the test binary stand for an agent: it launches the exec
// plugin through a Host, starts one task in it that runs a process of its
// own in the background, says "ready" and waits to be killed.
const agentArg = "__pluginhost_test_agent__"

// taskScript records its pid in task and its background child's in
// child, in its working directory (its own: in a sandbox, the only one of
// the host's /tmp it sees). The pids are the sandbox's own; the test
// finds the host's below the plugin.
const taskScript = `sleep 120 & echo $! > child.tmp; mv child.tmp child; echo $$ > task.tmp; mv task.tmp task; wait`

func serveAgent(dir string) int {
	h, err := pluginhost.New(pluginhost.Config{
		SelfExe:  os.Args[0],
		SelfArgs: func(name string) []string { return []string{serveArg, name} },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	e, err := h.Get(ctx, "exec")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, _ := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", taskScript}})
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := e.Start(ctx, executor.Task{ID: "orphan-check", TaskID: "t", JobID: "j", Config: cfg, WorkDir: work}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, f := range []string{"task", "child"} {
		for {
			if _, err := os.Stat(filepath.Join(work, f)); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Println("ready")
	select {}
}
