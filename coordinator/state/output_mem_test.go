package state_test

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/outputtest"
)

func TestMemOutput(t *testing.T) {
	outputtest.Run(t, func(*testing.T) state.OutputStore { return state.NewMemOutput() })
}
