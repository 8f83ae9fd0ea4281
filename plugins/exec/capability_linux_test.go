package exec

import "testing"

// A root without CAP_SYS_ADMIN (a container's, say) cannot build the
// sandbox: the executor learns it from the effective capability set.
func TestHasCapability(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		want         bool
	}{
		{"full root", "Name:\tx\nCapEff:\t000001ffffffffff\n", true},
		{"a container's default set", "CapEff:\t00000000a80425fb\n", false},
		{"only CAP_SYS_ADMIN", "CapEff:\t0000000000200000\n", true},
		{"no line", "Name:\tx\n", false},
		{"garbage", "CapEff:\tzz\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hasCapability([]byte(tc.status), capSysAdmin); got != tc.want {
				t.Fatalf("hasCapability = %v, want %v", got, tc.want)
			}
		})
	}
}
