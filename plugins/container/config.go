package container

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// ParseConfig decodes and checks a task config (api.ContainerConfig).
// Errors wrap executor.ErrInvalidConfig and say what is wrong.
func ParseConfig(raw []byte) (api.ContainerConfig, error) {
	var cfg api.ContainerConfig
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, fmt.Errorf("%w: container config is empty; want {\"image\": ...}", executor.ErrInvalidConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%w: container config: %v", executor.ErrInvalidConfig, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, fmt.Errorf("%w: container config: unexpected data after the JSON object", executor.ErrInvalidConfig)
	}
	if err := cfg.Check(); err != nil {
		return cfg, fmt.Errorf("%w: %v", executor.ErrInvalidConfig, err)
	}
	return cfg, nil
}
