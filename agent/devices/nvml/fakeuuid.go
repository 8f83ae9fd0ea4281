package nvml

import (
	"crypto/sha256"
	"fmt"
)

// seededUUID is fake GPU i's UUID for seed: a version-4-shaped UUID taken
// from SHA-256 of the seed, the set's name and i. The same seed gives the
// same UUIDs, so an agent that restarts on its data dir reports the fake
// GPUs it had (the coordinator holds back GPUs whose UUIDs it has not
// approved); different seeds give different ones.
func seededUUID(seed, set string, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "gpulayer fake gpu\x00%s\x00%s\x00%d", seed, set, i))
	b := sum[:16]
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
