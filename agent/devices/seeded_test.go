package devices

import (
	"testing"
)

// A fake set opened with a seed (an agent's data dir) has the same GPU
// UUIDs each time, and another seed gives others: an agent restarted on
// its data dir reports the GPUs it had.
func TestSeededFakeUUIDsAreStable(t *testing.T) {
	uuids := func(seed string) []string {
		src, err := OpenSeeded(t.Context(), nil, "dgxh100", seed)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		devs, err := src.Devices(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range devs {
			out = append(out, d.UUID)
		}
		return out
	}
	a, again, b := uuids("/var/lib/a"), uuids("/var/lib/a"), uuids("/var/lib/b")
	seen := map[string]bool{}
	for i := range a {
		if a[i] != again[i] {
			t.Fatalf("GPU %d: %s then %s with one seed", i, a[i], again[i])
		}
		if a[i] == b[i] || seen[a[i]] {
			t.Fatalf("GPU %d: %s repeats", i, a[i])
		}
		seen[a[i]] = true
	}
	if r1, r2 := uuids(""), uuids(""); r1[0] == r2[0] {
		t.Fatal("no seed gave the same UUID twice")
	}
}
