package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// Row is one line of the results table.
type Row struct {
	Scenario  string `json:"scenario"`
	Metric    string `json:"metric"`
	Value     string `json:"value"`
	Reference string `json:"reference,omitempty"`
	Target    string `json:"target,omitempty"`
	// Met is "yes", "no", or empty where the row has no target.
	Met  string `json:"met,omitempty"`
	Note string `json:"note,omitempty"`
}

// Machine describes where the benchmark ran.
type Machine struct {
	NumCPU    int    `json:"nproc"`
	CPUModel  string `json:"cpu_model"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Kernel    string `json:"kernel,omitempty"`
	// LoadAvg is /proc/loadavg at the start and the end of the run: the
	// machine is shared, and other work skews every figure.
	LoadAvgStart string `json:"loadavg_start,omitempty"`
	LoadAvgEnd   string `json:"loadavg_end,omitempty"`
}

// Report is everything one run measured; the JSON output.
type Report struct {
	Command     string         `json:"command"`
	Quick       bool           `json:"quick"`
	StartedAt   string         `json:"started_at"`
	WallSeconds float64        `json:"wall_seconds"`
	Machine     Machine        `json:"machine"`
	Rows        []Row          `json:"rows"`
	Details     map[string]any `json:"details"`
	Failures    []string       `json:"failures,omitempty"`
}

// add appends row. A quick run judges no target: its scenarios run at a
// fraction of the size the targets are set for, so a row's Met is
// dropped there (the target stays, for reference).
func (r *Report) add(row Row) {
	if r.Quick {
		row.Met = ""
	}
	r.Rows = append(r.Rows, row)
}

func (r *Report) detail(key string, v any) {
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details[key] = v
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// met renders whether a target was reached.
func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// judged renders whether a target was reached, or nothing in quick mode,
// whose scenarios run at a fraction of the size the targets are set for.
func (e *env) judged(ok bool) string {
	if e.opts.quick {
		return ""
	}
	return met(ok)
}

// printTable writes the table, one row per figure.
func (r *Report) printTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tMETRIC\tVALUE\tREFERENCE\tTARGET\tMET")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Scenario, row.Metric, row.Value, dash(row.Reference), dash(row.Target), dash(row.Met))
	}
	tw.Flush()
}

// markdown renders the table for docs/performance.md.
func (r *Report) markdown(w io.Writer) {
	fmt.Fprintln(w, "| scenario | metric | value | reference | target | met |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", row.Scenario, row.Metric, row.Value, dash(row.Reference), dash(row.Target), dash(row.Met))
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// summary is the one line the run ends with.
func (r *Report) summary() string {
	hit, total := 0, 0
	var missed []string
	for _, row := range r.Rows {
		switch row.Met {
		case "yes":
			hit++
			total++
		case "no":
			total++
			missed = append(missed, row.Scenario)
		}
	}
	mode := "full"
	if r.Quick {
		mode = "quick"
	}
	status := "ok"
	if len(r.Failures) > 0 {
		status = fmt.Sprintf("FAILED (%d functional errors: %s)", len(r.Failures), strings.Join(r.Failures, "; "))
	}
	if r.Quick {
		return fmt.Sprintf("bench %s: %s in %.1fs; targets not judged (a quick run is too small to compare with them; make bench judges them)", mode, status, r.WallSeconds)
	}
	miss := ""
	if len(missed) > 0 {
		miss = " (missed: " + strings.Join(uniq(missed), ",") + ")"
	}
	return fmt.Sprintf("bench %s: %s in %.1fs; targets met %d/%d%s", mode, status, r.WallSeconds, hit, total, miss)
}

func uniq(s []string) []string {
	var out []string
	for _, v := range s {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out
}

func (r *Report) writeMarkdown(path string) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Machine: %d CPUs, %s, %s, %s, kernel %s; load average %s at the start, %s at the end.\n", m.NumCPU, m.CPUModel, m.GoVersion, m.OS, m.Kernel, m.LoadAvgStart, m.LoadAvgEnd)
	fmt.Fprintf(&b, "Command: `%s` (%s, %.0f s).\n\n", r.Command, r.StartedAt, r.WallSeconds)
	r.markdown(&b)
	fmt.Fprintf(&b, "\n%s\n", r.summary())
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (r *Report) writeJSON(path string) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
