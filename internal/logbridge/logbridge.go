// Package logbridge adapts log/slog to hashicorp/go-hclog, the logger that
// raft and go-plugin expect, so that every line of the process goes through
// one slog handler.
package logbridge

import (
	"context"
	"io"
	"log"
	"log/slog"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// New returns an hclog.Logger writing to l at or above level.
func New(l *slog.Logger, name string, level hclog.Level) hclog.Logger {
	return &bridge{l: l, name: name, level: level}
}

type bridge struct {
	l       *slog.Logger
	name    string
	level   hclog.Level
	implied []any
}

var _ hclog.Logger = (*bridge)(nil)

func toSlog(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace, hclog.Debug:
		return slog.LevelDebug
	case hclog.Info:
		return slog.LevelInfo
	case hclog.Warn:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

func (b *bridge) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || level < b.level {
		return
	}
	all := make([]any, 0, len(b.implied)+len(args)+2)
	if b.name != "" {
		all = append(all, "subsystem", b.name)
	}
	all = append(all, b.implied...)
	all = append(all, args...)
	b.l.Log(context.Background(), toSlog(level), msg, all...)
}

func (b *bridge) Trace(msg string, args ...any) { b.Log(hclog.Trace, msg, args...) }
func (b *bridge) Debug(msg string, args ...any) { b.Log(hclog.Debug, msg, args...) }
func (b *bridge) Info(msg string, args ...any)  { b.Log(hclog.Info, msg, args...) }
func (b *bridge) Warn(msg string, args ...any)  { b.Log(hclog.Warn, msg, args...) }
func (b *bridge) Error(msg string, args ...any) { b.Log(hclog.Error, msg, args...) }

func (b *bridge) IsTrace() bool { return b.level <= hclog.Trace }
func (b *bridge) IsDebug() bool { return b.level <= hclog.Debug }
func (b *bridge) IsInfo() bool  { return b.level <= hclog.Info }
func (b *bridge) IsWarn() bool  { return b.level <= hclog.Warn }
func (b *bridge) IsError() bool { return b.level <= hclog.Error }

func (b *bridge) ImpliedArgs() []any { return b.implied }

func (b *bridge) With(args ...any) hclog.Logger {
	c := *b
	c.implied = append(append([]any{}, b.implied...), args...)
	return &c
}

func (b *bridge) Name() string { return b.name }

func (b *bridge) Named(name string) hclog.Logger {
	c := *b
	if b.name != "" {
		c.name = b.name + "." + name
	} else {
		c.name = name
	}
	return &c
}

func (b *bridge) ResetNamed(name string) hclog.Logger {
	c := *b
	c.name = name
	return &c
}

func (b *bridge) SetLevel(level hclog.Level) { b.level = level }
func (b *bridge) GetLevel() hclog.Level      { return b.level }

func (b *bridge) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return log.New(b.StandardWriter(nil), "", 0)
}

func (b *bridge) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writer{b}
}

type writer struct{ b *bridge }

func (w writer) Write(p []byte) (int, error) {
	w.b.Log(hclog.Info, strings.TrimSpace(string(p)))
	return len(p), nil
}
