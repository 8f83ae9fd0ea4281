package pluginhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// vetted is a plugin-directory executable that passed the rules.
type vetted struct {
	path string
	pin  []byte // nil when not pinned
}

// vet checks the plugin directory's executable for name: the directory
// and the file pass the ownership and mode rules (checkDir,
// checkTrusted), and a pinned file matches its SHA-256. A missing file is
// ErrUnknownExecutor; a refused one ErrPluginUntrusted with the reason.
func (h *Host) vet(name string) (vetted, error) {
	if h.cfg.PluginDir == "" || !validName.MatchString(name) {
		return vetted{}, fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	path := filepath.Join(h.cfg.PluginDir, BinaryPrefix+name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return vetted{}, fmt.Errorf("%w %q", ErrUnknownExecutor, name)
	}
	if err != nil {
		return vetted{}, fmt.Errorf("%w: %s: %v", ErrPluginUntrusted, path, err)
	}
	if err := checkDir(h.cfg.PluginDir); err != nil {
		return vetted{}, fmt.Errorf("%w: plugin directory %s %v", ErrPluginUntrusted, h.cfg.PluginDir, err)
	}
	if err := checkTrusted(fi); err != nil {
		return vetted{}, fmt.Errorf("%w: %s %v", ErrPluginUntrusted, path, err)
	}
	filePins, err := readPinsFile(h.cfg.PluginDir)
	if err != nil {
		return vetted{}, fmt.Errorf("%w: %s: %v", ErrPluginUntrusted, path, err)
	}
	pin, err := h.pinOf(name, filePins)
	if err != nil {
		return vetted{}, fmt.Errorf("%w: %s %v", ErrPluginUntrusted, path, err)
	}
	if pin != nil {
		sum, err := h.sumOf(path, fi)
		if err != nil {
			return vetted{}, fmt.Errorf("%w: %s: %v", ErrPluginUntrusted, path, err)
		}
		if string(sum) != string(pin) {
			return vetted{}, fmt.Errorf("%w: %s has SHA-256 %x, not its pinned %x", ErrPluginUntrusted, path, sum, pin)
		}
	}
	return vetted{path: path, pin: pin}, nil
}

// scanDir lists the executor names found in the plugin directory that
// pass vet. Each refused file is logged once per reason, not at every
// heartbeat.
func (h *Host) scanDir() []string {
	if h.cfg.PluginDir == "" {
		return nil
	}
	entries, err := os.ReadDir(h.cfg.PluginDir)
	if err != nil {
		h.warnOnce("", fmt.Sprintf("cannot read plugin directory %s: %v", h.cfg.PluginDir, err))
		return nil
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
		if !ok || !validName.MatchString(name) {
			continue
		}
		_, err := h.vet(name)
		switch {
		case err == nil:
			names = append(names, name)
			h.warnOnce(name, "")
		case errors.Is(err, ErrPluginUntrusted):
			h.warnOnce(name, err.Error())
		}
	}
	return names
}

// warnOnce logs why name is not advertised when the reason changes; an
// empty reason clears it.
func (h *Host) warnOnce(name, reason string) {
	h.trustMu.Lock()
	prev, seen := h.refused[name]
	if reason == "" {
		delete(h.refused, name)
	} else {
		h.refused[name] = reason
	}
	h.trustMu.Unlock()
	if reason != "" && (!seen || prev != reason) {
		h.log.Warn("executor plugin not advertised", "executor", name, "reason", reason)
	}
}
