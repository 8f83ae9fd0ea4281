//go:build !cgo || !linux

package nvml

import (
	"errors"
	"testing"
)

func TestOpenWithoutCgo(t *testing.T) {
	src, err := Open(t.Context(), nil)
	if src != nil || !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrNoCgo) {
		t.Fatalf("Open = %v, %v; want ErrUnavailable and ErrNoCgo", src, err)
	}
}
