//go:build !cgo || !linux

package nvml

import (
	"context"
	"fmt"
)

// ProbeSystem always fails in this build: NVML needs cgo.
func ProbeSystem(ctx context.Context) (ProbeReport, error) {
	if err := ctx.Err(); err != nil {
		return ProbeReport{}, err
	}
	return ProbeReport{}, fmt.Errorf("%w: %w", ErrUnavailable, ErrNoCgo)
}
