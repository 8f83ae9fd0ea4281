package api

import "testing"

func TestValidMIGProfile(t *testing.T) {
	for p, want := range map[string]bool{
		"1g.10gb": true, "7g.80gb": true, "1c.3g.40gb": true, "1g.10gb+me": true, "3g.20gb": true,
		"": false, "1g10gb": false, "9g.10gb": false, "1g.10GB": false, "1g.10gb+": false, "sm_90": false, "1g.12345gb": false,
	} {
		if got := ValidMIGProfile(p); got != want {
			t.Errorf("ValidMIGProfile(%q) = %v, want %v", p, got, want)
		}
	}
}
