package pluginhost

import (
	"strings"
	"sync"
)

// lastWordsBytes bounds what is kept of a plugin's standard error.
const lastWordsBytes = 16 << 10

// lastWords keeps the end of a plugin process's own standard error (not
// the synced os.Stderr of its Go code: what the runtime writes when it
// dies), so that a crash can say why.
type lastWords struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lastWords) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if over := len(l.buf) - lastWordsBytes; over > 0 {
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
	return len(p), nil
}

// panicLine returns the line of a Go panic or fatal error the process
// wrote ("panic: boom", with any "[recovered]" detail), or "".
func (l *lastWords) panicLine() string {
	l.mu.Lock()
	text := string(l.buf)
	l.mu.Unlock()
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			const max = 512
			if len(line) > max {
				line = line[:max] + "…"
			}
			return line
		}
	}
	return ""
}
