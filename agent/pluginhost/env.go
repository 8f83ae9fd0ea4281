package pluginhost

import (
	"os"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// pluginEnv is the whole environment of a plugin process, besides what
// go-plugin adds for its handshake: PATH, LANG, LC_*, TZ and TMPDIR of the
// agent's, nothing else. The agent's credentials and settings (its
// GPULAYER_* variables, cloud keys in its environment) never reach a
// plugin, nor, through it, a task.
func pluginEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if passedToPlugins(name) {
			out = append(out, kv)
		}
	}
	return out
}

func passedToPlugins(name string) bool {
	return executor.Inheritable(name) || name == "TMPDIR"
}
