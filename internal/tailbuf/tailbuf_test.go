package tailbuf

import "testing"

func TestKeepsTheLastBytes(t *testing.T) {
	cases := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"under the bound", 10, []string{"ab", "cd"}, "abcd"},
		{"over in one write", 4, []string{"abcdef"}, "cdef"},
		{"over across writes", 5, []string{"abc", "def", "gh"}, "defgh"},
		{"zero keeps nothing", 0, []string{"abc"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := New(c.max)
			for _, w := range c.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != c.want || b.Len() != len(c.want) {
				t.Fatalf("kept %q (len %d), want %q", got, b.Len(), c.want)
			}
		})
	}
}
