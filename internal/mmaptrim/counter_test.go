package mmaptrim

import "testing"

func TestCounter(t *testing.T) {
	cases := []struct {
		name  string
		every int64
		adds  []int
		due   []bool
	}{
		{"below the step", 10, []int{3, 3, 3}, []bool{false, false, false}},
		{"reaching it", 10, []int{4, 6, 1}, []bool{false, true, true}},
		{"zero: always", 0, []int{0, 1}, []bool{true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := Counter{Every: c.every}
			for i, n := range c.adds {
				if got := k.Add(n); got != c.due[i] {
					t.Errorf("add %d (#%d): due %v, want %v", n, i, got, c.due[i])
				}
			}
			k.Reset()
			if c.every > 1 && k.Add(1) {
				t.Error("due right after Reset")
			}
		})
	}
}
