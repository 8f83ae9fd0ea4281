package executor

import (
	"os"
	"strings"
)

// handshakeEnv are the variables go-plugin sets in a plugin's environment
// to hand it the connection settings. They mean nothing to a task.
var handshakeEnv = []string{
	"PLUGIN_MIN_PORT",
	"PLUGIN_MAX_PORT",
	"PLUGIN_PROTOCOL_VERSIONS",
	"PLUGIN_CLIENT_CERT",
	"PLUGIN_MULTIPLEX_GRPC",
	"PLUGIN_UNIX_SOCKET_DIR",
	"PLUGIN_UNIX_SOCKET_GROUP",
}

// Environ returns the plugin process's environment (os.Environ) without
// the variables go-plugin used to launch it: the handshake cookie, the
// port range, the client certificate and the like. Executors that start
// processes use it as the base environment of a task, so a task never
// inherits the plugin's credentials or believes it is a plugin itself.
func Environ() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isHandshakeVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

func isHandshakeVar(name string) bool {
	if name == Handshake.MagicCookieKey {
		return true
	}
	for _, h := range handshakeEnv {
		if name == h {
			return true
		}
	}
	return false
}

// Inheritable reports whether a task may inherit the variable name from
// the environment of the agent and of the plugin process: PATH, LANG,
// LC_* and TZ, defaults a job's env may override. Nothing else of theirs
// (credentials above all) is passed on; an executor builds the rest of a
// task's environment from Task.Env and its config.
func Inheritable(name string) bool {
	switch name {
	case "PATH", "LANG", "TZ":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
