//go:build !cgo || !linux

package cuda

import (
	"context"
	"fmt"
)

// Lib is never loaded in this build: it needs cgo on Linux.
type Lib struct{}

// OpenSystem always fails in this build.
func OpenSystem() (*Lib, error) { return Open("", "") }

// Open always fails in this build.
func Open(_, _ string) (*Lib, error) {
	return nil, fmt.Errorf("%w: this agent was built without cgo", ErrUnavailable)
}

const noCUDA = "no CUDA: this agent was built without cgo"

// HasCUBLAS is false.
func (l *Lib) HasCUBLAS() bool { return false }

// MemoryPattern is skipped.
func (l *Lib) MemoryPattern(context.Context, string) Outcome { return Outcome{Skipped, noCUDA} }

// Matmul is skipped.
func (l *Lib) Matmul(context.Context, string, string) Outcome { return Outcome{Skipped, noCUDA} }

// PeerBandwidth is skipped.
func (l *Lib) PeerBandwidth(context.Context, string, []string) Outcome {
	return Outcome{Skipped, noCUDA}
}
