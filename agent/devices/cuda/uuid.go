//go:build cgo && linux

package cuda

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// parseUUID turns NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" into
// the 16 bytes cuDeviceGetUuid reports.
func parseUUID(s string) ([16]byte, error) {
	var out [16]byte
	h := strings.ReplaceAll(strings.TrimPrefix(s, "GPU-"), "-", "")
	if len(h) != 32 {
		return out, fmt.Errorf("not a GPU UUID: %q", s)
	}
	if _, err := hex.Decode(out[:], []byte(h)); err != nil {
		return out, fmt.Errorf("not a GPU UUID: %q", s)
	}
	return out, nil
}
