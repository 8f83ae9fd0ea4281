package health

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gpulayer/gpulayer/internal/atomicfile"
)

// File is the name, in the agent's data dir, of the persisted statuses.
const File = "gpu-health.json"

type saved struct {
	Version int      `json:"version"`
	GPUs    []Status `json:"gpus"`
}

const fileVersion = 1

// Load reads the statuses saved in dir; none when there is no file.
func Load(dir string) ([]Status, error) {
	b, err := os.ReadFile(filepath.Join(dir, File))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("health: %w", err)
	}
	var s saved
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("health: %s is corrupt: %w", filepath.Join(dir, File), err)
	}
	if s.Version != fileVersion {
		return nil, fmt.Errorf("health: %s has version %d, this agent reads %d", filepath.Join(dir, File), s.Version, fileVersion)
	}
	return s.GPUs, nil
}

// Save writes statuses to dir (mode 0600), atomically.
func Save(dir string, statuses []Status) error {
	b, err := json.MarshalIndent(saved{Version: fileVersion, GPUs: statuses}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, File), b, 0o600); err != nil {
		return fmt.Errorf("health: %w", err)
	}
	return nil
}

// BootID returns the node's boot id (Linux), or "" where there is none:
// a saved fault then never counts as repaired by a reboot.
func BootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return string(b)
}
