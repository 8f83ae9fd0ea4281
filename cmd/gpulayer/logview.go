package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// A job's log, as `job logs` shows it: entries of many tasks (a gang's
// ranks) and attempts arrive interleaved, each a chunk of some stream
// that need not end at a line end. logView reassembles whole lines per
// task, attempt and stream, puts "[t<index> a<attempt>] " before each
// when the job has more than one task or attempt, writes a separator when
// a task's next attempt begins, and filters by task and time. A line
// longer than maxPartialLine is cut there, so memory stays bounded.

// maxPartialLine bounds the bytes held for one unfinished line.
const maxPartialLine = 64 << 10

// logKey names one stream of one attempt of one task.
type logKey struct {
	task    string
	attempt int
	stream  string
}

// logLine is one line ready to print, its line end included.
type logLine struct {
	stream string
	text   string
}

// logView turns log entries into lines. emit receives each line.
type logView struct {
	prefix   bool // put the task and attempt before each line
	noPrefix bool // --no-prefix: never, and no separators
	task     string
	since    time.Time
	emit     func(logLine) error

	partial map[logKey]*strings.Builder
	order   []logKey       // of partial, for a stable flush
	attempt map[string]int // task id: the attempt seen last
	index   map[string]int // task id: its index
}

func newLogView(emit func(logLine) error) *logView {
	return &logView{emit: emit, partial: map[logKey]*strings.Builder{}, attempt: map[string]int{}, index: map[string]int{}}
}

// wants reports whether e passes the --task and --since filters.
func (v *logView) wants(e api.LogEntry) bool {
	if v.task != "" && v.task != e.TaskID && v.task != strconv.Itoa(e.Index) {
		return false
	}
	if !v.since.IsZero() && e.Time != "" {
		if t, err := time.Parse(time.RFC3339Nano, e.Time); err == nil && t.Before(v.since) {
			return false
		}
	}
	return true
}

// add takes one entry.
func (v *logView) add(e api.LogEntry) error {
	if !v.wants(e) {
		return nil
	}
	v.index[e.TaskID] = e.Index
	if prev, seen := v.attempt[e.TaskID]; !seen || prev != e.Attempt {
		if e.Attempt > 1 && !v.noPrefix {
			v.prefix = true // from here on the output is more than one run's
		}
		if seen {
			// The earlier attempt wrote all it will: its unfinished lines go.
			if err := v.flushTask(e.TaskID); err != nil {
				return err
			}
		}
		v.attempt[e.TaskID] = e.Attempt
		if (seen || e.Attempt > 1) && !v.noPrefix {
			sep := fmt.Sprintf("──── task %d (%s), attempt %d ────\n", e.Index, e.TaskID, e.Attempt)
			if err := v.emit(logLine{api.StreamStdout, sep}); err != nil {
				return err
			}
		}
	}
	k := logKey{e.TaskID, e.Attempt, e.Stream}
	b := v.partial[k]
	if b == nil {
		b = &strings.Builder{}
		v.partial[k] = b
		v.order = append(v.order, k)
	}
	data := e.Data
	for data != "" {
		i := strings.IndexByte(data, '\n')
		if i < 0 {
			room := maxPartialLine - b.Len()
			if len(data) < room {
				b.WriteString(data)
				return nil
			}
			b.WriteString(data[:room])
			data = data[room:]
			if err := v.line(e, b.String()+"\n"); err != nil {
				return err
			}
			b.Reset()
			continue
		}
		b.WriteString(data[:i+1])
		data = data[i+1:]
		if err := v.line(e, b.String()); err != nil {
			return err
		}
		b.Reset()
	}
	return nil
}

// line emits one whole line of e's stream.
func (v *logView) line(e api.LogEntry, text string) error {
	if v.prefix {
		text = fmt.Sprintf("[t%d a%d] %s", e.Index, e.Attempt, text)
	}
	return v.emit(logLine{e.Stream, text})
}

// flushTask emits the unfinished lines of task's earlier attempts.
func (v *logView) flushTask(task string) error {
	return v.flushWhere(func(k logKey) bool { return k.task == task })
}

// flush emits every unfinished line: the stream has ended. With a prefix
// each gets a line end; without, the output ends as the task's did.
func (v *logView) flush() error { return v.flushWhere(func(logKey) bool { return true }) }

func (v *logView) flushWhere(match func(logKey) bool) error {
	kept := v.order[:0]
	var done []logKey
	for _, k := range v.order {
		if match(k) {
			done = append(done, k)
		} else {
			kept = append(kept, k)
		}
	}
	v.order = kept
	for _, k := range done {
		b := v.partial[k]
		delete(v.partial, k)
		if b.Len() == 0 {
			continue
		}
		text := b.String()
		if v.prefix {
			text += "\n"
		}
		if err := v.line(api.LogEntry{TaskID: k.task, Index: v.index[k.task], Attempt: k.attempt, Stream: k.stream}, text); err != nil {
			return err
		}
	}
	return nil
}

// parseSince reads --since: a duration before now (10m, 2h) or a time
// (RFC 3339).
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef("--since %s: a duration before now is not negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef("--since %q is neither a duration (10m, 2h) nor an RFC 3339 time (2026-01-02T15:04:05Z)", s)
}

// lineRing keeps the last n lines it is given, in a ring.
type lineRing struct {
	n     int
	lines []logLine
	next  int // where the next line goes once the ring is full
}

func (t *lineRing) add(l logLine) error {
	switch {
	case t.n == 0:
	case len(t.lines) < t.n:
		t.lines = append(t.lines, l)
	default:
		t.lines[t.next] = l
		t.next = (t.next + 1) % t.n
	}
	return nil
}

// each calls fn on the lines kept, oldest first.
func (t *lineRing) each(fn func(logLine) error) error {
	for i := range t.lines {
		if err := fn(t.lines[(t.next+i)%len(t.lines)]); err != nil {
			return err
		}
	}
	return nil
}
