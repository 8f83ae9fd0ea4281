package pluginhost

import (
	"strings"
	"testing"
)

func TestLastWordsFindsThePanic(t *testing.T) {
	cases := []struct {
		name, written, want string
	}{
		{"a panic after other output", "starting\nserving\npanic: boom\n\ngoroutine 1 [running]:\nmain.main()\n", "panic: boom"},
		{"a fatal error", "fatal error: concurrent map writes\n", "fatal error: concurrent map writes"},
		{"no panic", "exit 3\n", ""},
		{"only the end is kept", strings.Repeat("x", 2*lastWordsBytes) + "\npanic: late\n", "panic: late"},
		{"a long message is cut", "panic: " + strings.Repeat("y", 2000) + "\n", "panic: " + strings.Repeat("y", 505) + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newLastWords()
			for chunk := range strings.SplitSeq(c.written, "\n") { // written in pieces, as a pipe would
				_, _ = l.Write([]byte(chunk + "\n"))
			}
			if got := l.panicLine(); got != c.want {
				t.Fatalf("panicLine = %q, want %q", got, c.want)
			}
			if l.Len() > lastWordsBytes {
				t.Fatalf("kept %d bytes, more than %d", l.Len(), lastWordsBytes)
			}
		})
	}
}
