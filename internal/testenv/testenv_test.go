package testenv

import "testing"

func TestUint(t *testing.T) {
	for _, c := range []struct {
		set  string
		want uint64
	}{{"", 7}, {"0", 0}, {"1500", 1500}} {
		t.Setenv("GPULAYER_TESTENV_X", c.set)
		if got := Uint(t, "GPULAYER_TESTENV_X", 7); got != c.want {
			t.Errorf("%q: got %d, want %d", c.set, got, c.want)
		}
	}
}
