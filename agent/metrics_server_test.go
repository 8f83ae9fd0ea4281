package agent

import (
	"errors"
	"testing"
)

func TestCheckMetricsAddr(t *testing.T) {
	cases := []struct {
		addr        string
		allowRemote bool
		ok          bool
	}{
		{"", false, true},
		{"127.0.0.1:9400", false, true},
		{"127.0.0.2:0", false, true},
		{"[::1]:9400", false, true},
		{"localhost:9400", false, true},
		{":9400", false, false},
		{"0.0.0.0:9400", false, false},
		{"10.0.0.7:9400", false, false},
		{"gpu-node-17:9400", false, false},
		{"0.0.0.0:9400", true, true},
		{":9400", true, true},
		{"nonsense", false, false},
		{"nonsense", true, false},
	}
	for _, c := range cases {
		err := checkMetricsAddr(c.addr, c.allowRemote)
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrMetricsAddr)) {
			t.Errorf("checkMetricsAddr(%q, %v) = %v, want ok %v", c.addr, c.allowRemote, err, c.ok)
		}
	}
}
