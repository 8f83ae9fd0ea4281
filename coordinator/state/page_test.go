package state

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

func TestPageTakes(t *testing.T) {
	cases := []struct {
		name                        string
		taken, size, next, maxBytes int
		want                        bool
	}{
		{"first record, whatever its size", 0, 0, 10, 5, true},
		{"first record of an empty bound", 0, 0, 1, 0, true},
		{"within the bound", 2, 3, 2, 5, true},
		{"just over", 2, 3, 3, 5, false},
		{"an empty record at the bound", 1, 5, 0, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := output.PageTakes(c.taken, c.size, c.next, c.maxBytes); got != c.want {
				t.Errorf("output.PageTakes(%d, %d, %d, %d) = %v, want %v", c.taken, c.size, c.next, c.maxBytes, got, c.want)
			}
		})
	}
}
