package pluginhost

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PinsFile is the optional file, in the plugin directory, that pins
// plugins to the SHA-256 of their executable, in the format sha256sum
// writes: one "<64 hex>  gpulayer-executor-<name>" line per plugin (so
// `sha256sum gpulayer-executor-* > plugins.sha256` makes it). It must
// pass the same ownership and mode rules as a plugin, executable aside.
const PinsFile = "plugins.sha256"

// ErrBadPin is returned for a pin that is not a plugin name and 64 hex
// digits.
var ErrBadPin = errors.New("pluginhost: bad plugin pin")

// ParsePin reads a pin given as name=hex (the agent's --plugin-sha256).
func ParsePin(s string) (name, sum string, err error) {
	name, sum, ok := strings.Cut(s, "=")
	if !ok || !validName.MatchString(name) {
		return "", "", fmt.Errorf("%w %q: want <executor name>=<sha256 hex>", ErrBadPin, s)
	}
	if _, err := decodeSum(sum); err != nil {
		return "", "", fmt.Errorf("%w %q: %v", ErrBadPin, s, err)
	}
	return name, strings.ToLower(sum), nil
}

func decodeSum(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != sha256.Size {
		return nil, errors.New("a SHA-256 is 64 hex digits")
	}
	return b, nil
}

// readPinsFile reads PinsFile from dir; a missing file pins nothing.
func readPinsFile(dir string) (map[string][]byte, error) {
	path := filepath.Join(dir, PinsFile)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkFile(fi); err != nil {
		return nil, fmt.Errorf("%s %v", PinsFile, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pins := map[string][]byte{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, file, ok := strings.Cut(line, " ")
		file = strings.TrimPrefix(strings.TrimSpace(file), "*")
		name, prefixed := strings.CutPrefix(file, BinaryPrefix)
		raw, err := decodeSum(sum)
		if !ok || !prefixed || !validName.MatchString(name) || err != nil {
			return nil, fmt.Errorf("%s line %d: want \"<sha256 hex>  %s<name>\"", PinsFile, n, BinaryPrefix)
		}
		if prev, dup := pins[name]; dup && !bytes.Equal(prev, raw) {
			return nil, fmt.Errorf("%s pins %s twice, to different hashes", PinsFile, name)
		}
		pins[name] = raw
	}
	return pins, sc.Err()
}

// pinOf returns the pin of name, from the configuration or PinsFile (nil
// when unpinned). The two disagreeing is an error.
func (h *Host) pinOf(name string, filePins map[string][]byte) ([]byte, error) {
	cfg, inCfg := h.pins[name]
	file, inFile := filePins[name]
	switch {
	case inCfg && inFile && !bytes.Equal(cfg, file):
		return nil, fmt.Errorf("is pinned to %x by --plugin-sha256 and to %x by %s", cfg, file, PinsFile)
	case inCfg:
		return cfg, nil
	}
	return file, nil
}

// hashKey identifies a version of a file for the hash cache.
type hashKey struct {
	size int64
	mod  time.Time
}

// sumOf returns the SHA-256 of the file at path, cached while its size
// and modification time stay the same (Names runs at every heartbeat).
// The launch checks again through go-plugin's SecureConfig.
func (h *Host) sumOf(path string, fi fs.FileInfo) ([]byte, error) {
	key := hashKey{fi.Size(), fi.ModTime()}
	h.trustMu.Lock()
	c, ok := h.sums[path]
	h.trustMu.Unlock()
	if ok && c.key == key {
		return c.sum, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hash := sha256.New()
	if _, err := io.Copy(hash, f); err != nil {
		return nil, err
	}
	sum := hash.Sum(nil)
	h.trustMu.Lock()
	h.sums[path] = cachedSum{key, sum}
	h.trustMu.Unlock()
	return sum, nil
}

type cachedSum struct {
	key hashKey
	sum []byte
}
