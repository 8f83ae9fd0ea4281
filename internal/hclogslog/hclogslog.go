// Package hclogslog adapts a log/slog logger to hclog.Logger, for the
// HashiCorp libraries (go-plugin) that only speak hclog. Records keep
// their key/value pairs; a logger's name becomes the "logger" attribute.
// Trace maps to slog.LevelDebug-4.
package hclogslog

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level hclog's Trace maps to.
const LevelTrace = slog.LevelDebug - 4

// Logger is an hclog.Logger writing to a slog.Logger.
type Logger struct {
	log   *slog.Logger
	name  string
	args  []any
	level *levelVar // shared with loggers derived by With and Named
}

type levelVar struct {
	mu sync.Mutex
	l  hclog.Level
}

var _ hclog.Logger = (*Logger)(nil)

// New returns an hclog.Logger writing to l. Its level follows l's
// handler; SetLevel can only raise the floor further.
func New(l *slog.Logger) *Logger {
	return &Logger{log: l, level: &levelVar{l: hclog.NoLevel}}
}

func toSlog(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return LevelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}

func (g *Logger) floor() hclog.Level {
	g.level.mu.Lock()
	defer g.level.mu.Unlock()
	return g.level.l
}

func (g *Logger) enabled(l hclog.Level) bool {
	if f := g.floor(); f == hclog.Off || (f != hclog.NoLevel && l < f) {
		return false
	}
	return g.log.Enabled(context.Background(), toSlog(l))
}

// Log implements hclog.Logger.
func (g *Logger) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level == hclog.NoLevel {
		level = hclog.Info
	}
	if !g.enabled(level) {
		return
	}
	attrs := make([]any, 0, len(args)+2)
	if g.name != "" {
		attrs = append(attrs, slog.String("logger", g.name))
	}
	attrs = append(attrs, normalize(args)...)
	g.log.Log(context.Background(), toSlog(level), msg, attrs...)
}

// normalize turns hclog's alternating key/value args into slog args,
// flagging a dangling value as hclog does.
func normalize(args []any) []any {
	if len(args)%2 == 1 {
		args = append(args[:len(args)-1:len(args)-1], "EXTRA_VALUE_AT_END", args[len(args)-1])
	}
	out := make([]any, 0, len(args))
	for i := 0; i < len(args); i += 2 {
		key, ok := args[i].(string)
		if !ok {
			key = "!BADKEY"
		}
		out = append(out, slog.Any(key, args[i+1]))
	}
	return out
}

// Trace implements hclog.Logger.
func (g *Logger) Trace(msg string, args ...any) { g.Log(hclog.Trace, msg, args...) }

// Debug implements hclog.Logger.
func (g *Logger) Debug(msg string, args ...any) { g.Log(hclog.Debug, msg, args...) }

// Info implements hclog.Logger.
func (g *Logger) Info(msg string, args ...any) { g.Log(hclog.Info, msg, args...) }

// Warn implements hclog.Logger.
func (g *Logger) Warn(msg string, args ...any) { g.Log(hclog.Warn, msg, args...) }

// Error implements hclog.Logger.
func (g *Logger) Error(msg string, args ...any) { g.Log(hclog.Error, msg, args...) }

// IsTrace implements hclog.Logger.
func (g *Logger) IsTrace() bool { return g.enabled(hclog.Trace) }

// IsDebug implements hclog.Logger.
func (g *Logger) IsDebug() bool { return g.enabled(hclog.Debug) }

// IsInfo implements hclog.Logger.
func (g *Logger) IsInfo() bool { return g.enabled(hclog.Info) }

// IsWarn implements hclog.Logger.
func (g *Logger) IsWarn() bool { return g.enabled(hclog.Warn) }

// IsError implements hclog.Logger.
func (g *Logger) IsError() bool { return g.enabled(hclog.Error) }

// ImpliedArgs implements hclog.Logger.
func (g *Logger) ImpliedArgs() []any { return append([]any(nil), g.args...) }

// With implements hclog.Logger.
func (g *Logger) With(args ...any) hclog.Logger {
	c := *g
	c.log = g.log.With(normalize(args)...)
	c.args = append(append([]any(nil), g.args...), args...)
	return &c
}

// Name implements hclog.Logger.
func (g *Logger) Name() string { return g.name }

// Named implements hclog.Logger: names nest with dots.
func (g *Logger) Named(name string) hclog.Logger {
	c := *g
	if g.name != "" {
		c.name = g.name + "." + name
	} else {
		c.name = name
	}
	return &c
}

// ResetNamed implements hclog.Logger.
func (g *Logger) ResetNamed(name string) hclog.Logger {
	c := *g
	c.name = name
	return &c
}

// SetLevel implements hclog.Logger. It sets a floor below which records
// are dropped, on this logger and all loggers sharing its level; the slog
// handler still drops what it does not want.
func (g *Logger) SetLevel(level hclog.Level) {
	g.level.mu.Lock()
	defer g.level.mu.Unlock()
	g.level.l = level
}

// GetLevel implements hclog.Logger: the lowest level that is logged.
func (g *Logger) GetLevel() hclog.Level {
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error} {
		if g.enabled(l) {
			return l
		}
	}
	return hclog.Off
}

// StandardLogger implements hclog.Logger.
func (g *Logger) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(g.StandardWriter(opts), "", 0)
}

// StandardWriter implements hclog.Logger: each line written is one
// record, at opts.ForceLevel, or inferred from a "[LEVEL]" prefix when
// opts.InferLevels is set, or Info.
func (g *Logger) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	if opts == nil {
		opts = &hclog.StandardLoggerOptions{}
	}
	return &LineWriter{Log: func(line string) {
		level := hclog.Info
		switch {
		case opts.ForceLevel != hclog.NoLevel:
			level = opts.ForceLevel
		case opts.InferLevels || opts.InferLevelsWithTimestamp:
			level, line = inferLevel(line)
		}
		g.Log(level, line)
	}}
}

var levelPrefixes = []struct {
	prefix string
	level  hclog.Level
}{
	{"[TRACE]", hclog.Trace}, {"[DEBUG]", hclog.Debug}, {"[INFO]", hclog.Info},
	{"[WARN]", hclog.Warn}, {"[ERROR]", hclog.Error}, {"[ERR]", hclog.Error},
}

func inferLevel(line string) (hclog.Level, string) {
	for _, p := range levelPrefixes {
		if i := strings.Index(line, p.prefix); i >= 0 {
			return p.level, strings.TrimSpace(line[i+len(p.prefix):])
		}
	}
	return hclog.Info, line
}

// LineWriter calls Log once per complete line written to it (without the
// newline). It is safe for concurrent use; a partial last line is held
// until its newline arrives.
type LineWriter struct {
	Log func(line string)
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (w *LineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.buf.Next(i+1)), "\r\n")
		w.Log(line)
	}
	return len(p), nil
}
