package main

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func entry(index, attempt int, stream, data, at string) api.LogEntry {
	return api.LogEntry{TaskID: "j1-" + string(rune('0'+index)), Index: index, Attempt: attempt, Stream: stream, Data: data, Time: at}
}

// render runs entries through a view set up by setup and returns what it
// printed, stderr lines marked "E:".
func render(t *testing.T, setup func(*logView), entries []api.LogEntry) string {
	t.Helper()
	var out strings.Builder
	v := newLogView(func(l logLine) error {
		if l.stream == api.StreamStderr {
			out.WriteString("E:")
		}
		out.WriteString(l.text)
		return nil
	})
	setup(v)
	for _, e := range entries {
		if err := v.add(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Lines stay whole when a gang's ranks interleave, each says whose it is,
// and a retried attempt is marked; the filters pick tasks and times.
func TestLogView(t *testing.T) {
	const t0, t1, t2 = "2026-12-06T10:00:00Z", "2026-12-06T10:05:00Z", "2026-12-06T10:10:00Z"
	gang := []api.LogEntry{
		entry(0, 1, "stdout", "hel", t0),
		entry(1, 1, "stdout", "wor", t0),
		entry(0, 1, "stdout", "lo\nrank0 ", t1),
		entry(1, 1, "stdout", "ld\n", t1),
		entry(1, 1, "stderr", "oops\n", t1),
		entry(0, 1, "stdout", "done\n", t2),
	}
	retried := []api.LogEntry{
		entry(0, 1, "stdout", "try\npartial", t0),
		entry(0, 2, "stdout", "try\n", t2),
	}
	since := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	tests := []struct {
		name    string
		setup   func(*logView)
		entries []api.LogEntry
		want    string
	}{
		{"a gang: whole lines, prefixed", func(v *logView) { v.prefix = true }, gang,
			"[t0 a1] hello\n[t1 a1] world\nE:[t1 a1] oops\n[t0 a1] rank0 done\n"},
		{"a gang, --no-prefix: whole lines alone", func(v *logView) { v.noPrefix = true }, gang,
			"hello\nworld\nE:oops\nrank0 done\n"},
		{"--task by index", func(v *logView) { v.prefix, v.task = true, "1" }, gang,
			"[t1 a1] world\nE:[t1 a1] oops\n"},
		{"--task by id", func(v *logView) { v.prefix, v.task = true, "j1-0" }, gang,
			"[t0 a1] hello\n[t0 a1] rank0 done\n"},
		{"--since", func(v *logView) { v.prefix, v.since = true, since(t2) }, gang,
			"[t0 a1] done\n"},
		{"a retry: its attempt marked, the last unfinished line flushed", func(*logView) {}, retried,
			"try\n[t0 a1] partial\n──── task 0 (j1-0), attempt 2 ────\n[t0 a2] try\n"},
		{"a retry, --no-prefix: bytes as written", func(v *logView) { v.noPrefix = true }, retried,
			"try\npartialtry\n"},
		{"one task, one attempt: as written, no line end added", func(*logView) {},
			[]api.LogEntry{entry(0, 1, "stdout", "a\nb", t0)}, "a\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, tc.setup, tc.entries); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// A line that never ends is cut at maxPartialLine: memory stays bounded.
func TestLogViewBoundsALine(t *testing.T) {
	long := strings.Repeat("x", maxPartialLine+10)
	got := render(t, func(*logView) {}, []api.LogEntry{entry(0, 1, "stdout", long, "")})
	if want := long[:maxPartialLine] + "\n" + long[maxPartialLine:]; got != want {
		t.Errorf("got %d bytes, want the line cut at %d", len(got), maxPartialLine)
	}
}

// --tail keeps the last N lines, oldest first.
func TestLineRing(t *testing.T) {
	for _, n := range []int{0, 1, 3, 10} {
		r := &lineRing{n: n}
		for i := range 7 {
			_ = r.add(logLine{text: string(rune('a' + i))})
		}
		var got string
		_ = r.each(func(l logLine) error { got += l.text; return nil })
		want := "abcdefg"[max(0, 7-n):]
		if got != want {
			t.Errorf("tail %d: %q, want %q", n, got, want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{"10m", now.Add(-10 * time.Minute), false},
		{"0s", now, false},
		{"2026-12-06T11:00:00Z", now.Add(-time.Hour), false},
		{"-5m", time.Time{}, true},
		{"yesterday", time.Time{}, true},
		{"", time.Time{}, true},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.bad || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v", tc.in, got, err)
		}
	}
}
