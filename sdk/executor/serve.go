package executor

import (
	"io"
	"log/slog"
	"os"
	"strings"

	plugin "github.com/hashicorp/go-plugin"
)

// Serve runs impl as an executor plugin and does not return until the
// agent closes the plugin. Call it from the plugin's main.
//
// Serve sets the default slog logger to one that writes in the JSON shape
// go-plugin parses on the host, so records logged with slog inside the
// plugin reach the agent's log with their level and attributes. Anything
// written to os.Stdout or os.Stderr after Serve starts is not task output:
// executors must deliver task output through Logs.
func Serve(impl Executor) {
	// Capture stderr before go-plugin swaps os.Stderr for its stdio pipe:
	// the host parses this one as the plugin's log.
	slog.SetDefault(slog.New(NewPluginLogHandler(os.Stderr, slog.LevelDebug)))
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         PluginSet(impl),
		GRPCServer:      plugin.DefaultGRPCServer,
	})
}

// NewPluginLogHandler returns a slog handler writing JSON lines in the
// shape go-plugin's host parses as structured plugin logs (hclog's JSON
// format: @level, @message, @timestamp). Records below level are dropped.
func NewPluginLogHandler(w io.Writer, level slog.Leveler) slog.Handler {
	return slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: hclogAttr,
	})
}

// hclogTimeFormat is the timestamp layout go-plugin's host accepts.
const hclogTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

func hclogAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.String("@timestamp", a.Value.Time().Format(hclogTimeFormat))
	case slog.LevelKey:
		lvl, _ := a.Value.Any().(slog.Level)
		return slog.String("@level", hclogLevel(lvl))
	case slog.MessageKey:
		return slog.String("@message", a.Value.String())
	}
	return a
}

func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	default:
		return strings.ToLower(slog.LevelError.String())
	}
}
