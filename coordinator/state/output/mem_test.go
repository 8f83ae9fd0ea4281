package output_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/coordinator/state/output/outputtest"
)

func TestMemOutput(t *testing.T) {
	outputtest.Run(t, func(*testing.T) output.Store { return output.NewMem() })
}
