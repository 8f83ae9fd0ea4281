package pluginhost

import (
	"strings"

	"github.com/gpulayer/gpulayer/internal/tailbuf"
)

// lastWordsBytes bounds what is kept of a plugin's standard error.
const lastWordsBytes = 16 << 10

// lastWords keeps the end of a plugin process's own standard error (not
// the synced os.Stderr of its Go code: what the runtime writes when it
// dies), so that a crash can say why.
type lastWords struct{ tailbuf.Buffer }

func newLastWords() *lastWords { return &lastWords{tailbuf.Buffer{Max: lastWordsBytes}} }

// panicLine returns the line of a Go panic or fatal error the process
// wrote ("panic: boom", with any "[recovered]" detail), or "".
func (l *lastWords) panicLine() string {
	for line := range strings.Lines(l.String()) {
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
