package exec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Config is the exec executor's task config.
type Config struct {
	// Command is the program to run: a path, or a name looked up in the
	// task environment's PATH. Required.
	Command string `json:"command"`
	// Args are the program's arguments (not including the program).
	Args []string `json:"args,omitempty"`
	// Env is added to the variables the plugin passes on (PATH, LANG,
	// LC_*, TZ); Task.Env overrides it.
	Env map[string]string `json:"env,omitempty"`
	// Dir is the working directory, relative to Task.WorkDir (empty
	// means Task.WorkDir). It must stay inside Task.WorkDir: absolute
	// paths and ".." that climbs out are refused (api.CheckExecDir), and
	// so is a dir whose symbolic links lead out.
	Dir string `json:"dir,omitempty"`
}

// ParseConfig decodes and checks a task config. Errors wrap
// executor.ErrInvalidConfig and say what is wrong.
func ParseConfig(raw []byte) (Config, error) {
	var cfg Config
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, fmt.Errorf("%w: exec config is empty; want {\"command\": ...}", executor.ErrInvalidConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%w: exec config: %v", executor.ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%w: exec config: unexpected data after the JSON object", executor.ErrInvalidConfig)
	}
	if strings.TrimSpace(cfg.Command) == "" {
		return cfg, fmt.Errorf("%w: exec config: \"command\" is required", executor.ErrInvalidConfig)
	}
	for k := range cfg.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return cfg, fmt.Errorf("%w: exec config: bad environment variable name %q", executor.ErrInvalidConfig, k)
		}
	}
	if strings.ContainsRune(cfg.Command, 0) || strings.ContainsRune(cfg.Dir, 0) {
		return cfg, fmt.Errorf("%w: exec config: NUL byte in command or dir", executor.ErrInvalidConfig)
	}
	if err := api.CheckExecDir(cfg.Dir); err != nil {
		return cfg, fmt.Errorf("%w: exec config: dir %q %v", executor.ErrInvalidConfig, cfg.Dir, err)
	}
	return cfg, nil
}
