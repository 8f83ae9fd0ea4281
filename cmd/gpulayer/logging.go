package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// logLevels are the values --log-level takes.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// logFormats are the values --log-format takes.
var logFormats = []string{"text", "json"}

type logFlags struct {
	level  levelValue
	format formatValue
}

func (l *logFlags) register(fs *pflag.FlagSet) {
	l.level = levelValue(slog.LevelInfo)
	l.format = "text"
	fs.Var(&l.level, "log-level", "log level: debug, info, warn, error")
	fs.Var(&l.format, "log-format", "log format: text or json")
}

func (l *logFlags) logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.Level(l.level)}
	if l.format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// levelValue is --log-level: a level name, any case; anything else is
// refused when the flag, its variable or the config file is read (a
// usage error), rather than quietly logging at info.
type levelValue slog.Level

func (v *levelValue) String() string { return strings.ToLower(slog.Level(*v).String()) }
func (v *levelValue) Type() string   { return "level" }

func (v *levelValue) Set(s string) error {
	lv, ok := logLevels[strings.ToLower(s)]
	if !ok {
		return fmt.Errorf("unknown log level %q (want debug, info, warn or error)", s)
	}
	*v = levelValue(lv)
	return nil
}

// formatValue is --log-format: text or json.
type formatValue string

func (v *formatValue) String() string { return string(*v) }
func (v *formatValue) Type() string   { return "format" }

func (v *formatValue) Set(s string) error {
	for _, f := range logFormats {
		if s == f {
			*v = formatValue(s)
			return nil
		}
	}
	return fmt.Errorf("unknown log format %q (want text or json)", s)
}
