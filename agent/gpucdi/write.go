package gpucdi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	specs "tags.cncf.io/container-device-interface/specs-go"
)

// Write stores spec as dir/name (a .json file name) atomically: written
// to a hidden temporary file in dir, synced and renamed over the old
// one, so that a CDI consumer reading the directory sees the old spec or
// the new one, never half of one. A spec equal to the file's content is
// not written again; changed reports whether it was. dir is created if
// missing.
func Write(dir, name string, spec *specs.Spec) (changed bool, err error) {
	if filepath.Base(name) != name || filepath.Ext(name) != ".json" {
		return false, fmt.Errorf("gpucdi: spec file name %q: want a plain name ending in .json", name)
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return false, fmt.Errorf("gpucdi: %w", err)
	}
	b = append(b, '\n')
	path := filepath.Join(dir, name)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("gpucdi: %w", err)
	}
	// A dot and no .json: the consumers' directory scans skip it.
	tmp, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return false, fmt.Errorf("gpucdi: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removed on failure
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("gpucdi: writing %s: %w", path, err)
	}
	return true, nil
}

// Remove deletes dir/name if it is there.
func Remove(dir, name string) error {
	err := os.Remove(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("gpucdi: %w", err)
	}
	return nil
}
