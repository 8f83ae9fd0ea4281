//go:build cgo && linux

package integration

import (
	"testing"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/agent/devices/nvml/nvmltest"
)

// fixtureSource is the device source an agent reads m through, as it
// reads the system's NVML.
func fixtureSource(t *testing.T, m *nvmltest.Machine) *nvml.Source {
	t.Helper()
	src, err := nvml.OpenInterface(t.Context(), nil, m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return src
}
