package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Compute capabilities compare as numbers: a 10.0 GPU meets a 9.0 floor
// and a 9.0 GPU does not meet a 10.0 one.
func TestComputeCapabilityComparesAsNumbers(t *testing.T) {
	cases := []struct {
		have, want string
		fits       bool
	}{
		{"10.0", "9.0", true}, {"9.0", "10.0", false}, {"9.0", "9.0", true},
		{"8.6", "8.0", true}, {"8.0", "8.6", false}, {"12.1", "10.0", true},
	}
	for _, c := range cases {
		d := gpus("GPU-1")[0]
		d.ComputeCapability = c.have
		if got := deviceFits(d, &command.Resources{GPUs: 1, ComputeCapability: c.want}); got != c.fits {
			t.Errorf("a %s GPU for a %s floor: fits %v, want %v", c.have, c.want, got, c.fits)
		}
	}
}
