package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
)

// Output formats of -o.
const (
	formatTable = "table" // aligned columns for people
	formatWide  = "wide"  // the table with more columns
	formatJSON  = "json"  // the API's own JSON
	formatCSV   = "csv"   // comma-separated values, where a command offers them (usage)
)

// format is the value of -o: it refuses anything but the three formats
// while the flags are parsed.
type format string

func (f *format) String() string { return string(*f) }
func (f *format) Type() string   { return "table|wide|json" }

func (f *format) Set(s string) error {
	switch s {
	case formatTable, formatWide, formatJSON, formatCSV:
		*f = format(s)
		return nil
	}
	return fmt.Errorf("want table, wide or json (csv where offered), got %q", s)
}

// outputFlags is -o table|wide|json on a read command; --json stays as
// the older spelling of -o json.
type outputFlags struct {
	format format
	json   bool
	// stream prints JSON one document a line (set by --watch).
	stream bool
	// jsonOnly: the command takes --json alone (a write command).
	jsonOnly bool
}

// jsonOnly is the output of a write command: --json or a sentence.
func jsonOnly() *outputFlags { return &outputFlags{jsonOnly: true} }

func (o *outputFlags) register(fs *pflag.FlagSet) {
	o.format = formatTable
	fs.VarP(&o.format, "output", "o", "output format: table, wide or json")
	// GPULAYER_OUTPUT kept its first meaning, the format; job submit's
	// --output GLOB reads GPULAYER_OUTPUT_GLOB.
	readsEnv(fs, "output", "GPULAYER_OUTPUT_FORMAT", "GPULAYER_OUTPUT")
	fs.BoolVar(&o.json, "json", false, "print JSON (same as -o json)")
}

// is reports whether the chosen format is f.
func (o *outputFlags) is(f string) bool {
	if o.json {
		return f == formatJSON
	}
	return string(o.format) == f
}

// print writes v as JSON, or calls table with a tabwriter on stdout (wide
// true for -o wide).
func (o *outputFlags) print(v any, table func(w io.Writer, wide bool)) error {
	if o.is(formatCSV) {
		return usagef("-o csv is offered by gpulayer usage only; use table, wide or json")
	}
	if o.is(formatJSON) {
		if o.stream {
			return printJSONLine(v)
		}
		return printJSON(v)
	}
	tw := newTable(humanOut)
	table(tw, o.is(formatWide))
	return tw.Flush()
}

// newTable is the tabwriter every table is written through.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// row writes one tab-separated table row. Each cell is escaped whole
// (sanitize.go): a value cannot add a column, a row or a terminal
// sequence.
func row(w io.Writer, cells ...string) {
	safe := make([]string, len(cells))
	for i, c := range cells {
		safe[i] = cell(c)
	}
	fmt.Fprintln(w, strings.Join(safe, "\t"))
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printJSONLine(v any) error { return json.NewEncoder(os.Stdout).Encode(v) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clock is what tables measure ages against.
var clock = time.Now

// ago renders an RFC 3339 time as its distance from now ("3s ago", "in
// 2h"); "-" when empty, the text itself when it does not parse.
func ago(ts string) string {
	if ts == "" {
		return "-"
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return ts
	}
	d := clock().Sub(t)
	if d < 0 {
		return "in " + shortDuration(-d)
	}
	return shortDuration(d) + " ago"
}

// when is a time in a table: its age, or with -o wide the time itself.
func when(ts string, wide bool) string {
	if wide {
		return dash(ts)
	}
	return ago(ts)
}

// shortDuration is d in its largest whole unit: 3s, 5m, 2h, 4d.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

// commaList joins a list with commas, "-" when empty.
func commaList(l []string) string { return dash(strings.Join(l, ",")) }
