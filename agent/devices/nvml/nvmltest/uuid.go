//go:build cgo && linux

package nvmltest

import "fmt"

// StableUUID is the UUID StableUUIDs gives device i:
// "GPU-00000000-0000-4000-8000-00000000000i" (i in hexadecimal).
func StableUUID(i int) string {
	return fmt.Sprintf("GPU-00000000-0000-4000-8000-%012x", i)
}

// WithUUIDs sets the devices' UUIDs, in index order, instead of the random
// ones the mock servers generate, so that golden files stay stable. New
// panics unless there is one distinct UUID per device.
func WithUUIDs(uuids ...string) Option {
	return func(c *config) { c.uuids = append([]string{}, uuids...) }
}

// StableUUIDs gives device i the UUID StableUUID(i).
func StableUUIDs() Option {
	return func(c *config) { c.stableUUIDs = true }
}

// setUUIDs gives the devices uuids. It runs in New, before any call.
func (m *Machine) setUUIDs(uuids []string) {
	if len(uuids) != len(m.devs) {
		panic(fmt.Sprintf("nvmltest: WithUUIDs: %d UUIDs for %d devices", len(uuids), len(m.devs)))
	}
	seen := map[string]bool{}
	for i, u := range uuids {
		if seen[u] {
			panic(fmt.Sprintf("nvmltest: WithUUIDs: UUID %q given twice", u))
		}
		seen[u] = true
		m.devs[i].UUID = u
	}
}
