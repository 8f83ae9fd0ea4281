package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/coordinator/auth"
)

// configFileAnnotation marks the commands whose --config names a TOML
// file of flag values (coordinator run, agent run; job submit's --config
// is something else).
const configFileAnnotation = "gpulayer-config-file"

// errConfig: a configuration file that cannot be used.
var errConfig = errors.New("config file")

// takesConfigFile registers --config FILE on cmd.
func takesConfigFile(cmd *cobra.Command) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[configFileAnnotation] = "true"
	cmd.Flags().String("config", "", "TOML file of flag values: the long flag names as keys (see deploy/*.example.toml); flags and variables win over it")
}

// bindConfigFile sets, from cmd's --config file, every flag given neither
// on the command line nor in the environment. A key that names no flag of
// the command is refused, naming the key and the file.
func bindConfigFile(cmd *cobra.Command) error {
	if cmd.Annotations[configFileAnnotation] == "" {
		return nil
	}
	fs := cmd.Flags()
	file, err := fs.GetString("config")
	if err != nil || file == "" {
		return err
	}
	// One open: the mode checked is that of the file read.
	fd, err := os.Open(file)
	if err != nil {
		return usageError{fmt.Errorf("%w %s: %w", errConfig, file, err)}
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil {
		return usageError{fmt.Errorf("%w %s: %w", errConfig, file, err)}
	}
	var values map[string]any
	if _, err := toml.NewDecoder(fd).Decode(&values); err != nil {
		// A parse error may quote the line it stopped at: a token there
		// must not reach the terminal or a log that captures it.
		return usageError{fmt.Errorf("%w %s: %s", errConfig, file, auth.Redact(err.Error()))}
	}
	if err := checkSecretConfig(file, fi, values); err != nil { // configperm.go
		return usageError{err}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil || k == "config" || k == "help" {
			// A token pasted on a line of its own reads as a key.
			return usagef("%w %s: unknown key %q (keys are the long flags of %s)", errConfig, file, auth.Redact(k), cmd.CommandPath())
		}
		if f.Changed || len(f.Annotations[sourceAnnotation]) > 0 {
			continue // the command line or the environment wins
		}
		if err := setFromConfig(f, values[k]); err != nil {
			return usagef("%w %s: key %q: %s", errConfig, file, k, auth.Redact(err.Error()))
		}
		_ = fs.SetAnnotation(k, sourceAnnotation, []string{file})
	}
	return nil
}

// setFromConfig sets a flag from a TOML value: a string, number or
// boolean as its text; an array element by element for repeatable flags
// (plugin-sha256), else joined with commas (the comma-separated lists).
func setFromConfig(f *pflag.Flag, v any) error {
	switch v := v.(type) {
	case string, bool, int64, float64:
		return f.Value.Set(fmt.Sprint(v))
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			switch e.(type) {
			case string, bool, int64, float64:
				parts[i] = fmt.Sprint(e)
			default:
				return fmt.Errorf("want an array of strings or numbers, got %T in it", e)
			}
		}
		if _, repeatable := f.Value.(pflag.SliceValue); repeatable || f.Value.Type() == (&pinFlag{}).Type() {
			for _, p := range parts {
				if err := f.Value.Set(p); err != nil {
					return err
				}
			}
			return nil
		}
		return f.Value.Set(strings.Join(parts, ","))
	}
	return fmt.Errorf("want a string, number, boolean or array, got %T", v)
}
