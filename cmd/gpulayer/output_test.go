package main

import (
	"testing"
	"time"
)

func TestAgo(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock = func() time.Time { return base }
	t.Cleanup(func() { clock = time.Now })
	at := func(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }
	for _, tc := range []struct{ in, want string }{
		{"", "-"},
		{"not a time", "not a time"},
		{at(-3 * time.Second), "3s ago"},
		{at(-90 * time.Second), "1m ago"},
		{at(-5 * time.Hour), "5h ago"},
		{at(-72 * time.Hour), "3d ago"},
		{at(23 * time.Hour), "in 23h"},
	} {
		if got := ago(tc.in); got != tc.want {
			t.Errorf("ago(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFormatFlag(t *testing.T) {
	for _, tc := range []struct {
		format string
		json   bool
		is     string
	}{
		{formatTable, false, formatTable},
		{formatWide, false, formatWide},
		{formatJSON, false, formatJSON},
		{formatTable, true, formatJSON}, // --json is -o json
	} {
		var f format
		if err := f.Set(tc.format); err != nil {
			t.Fatal(err)
		}
		o := outputFlags{format: f, json: tc.json}
		if !o.is(tc.is) {
			t.Errorf("-o %s --json=%v is not %s", tc.format, tc.json, tc.is)
		}
	}
	var f format
	if err := f.Set("yaml"); err == nil {
		t.Error("-o yaml accepted")
	}
}
