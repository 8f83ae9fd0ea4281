package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// systemdUnits are the units in deploy/systemd and the example config
// each one's --config is documented by.
var systemdUnits = []struct{ unit, example string }{
	{"gpulayer-coordinator.service", "coordinator.example.toml"},
	{"gpulayer-agent.service", "agent.example.toml"},
}

const unitBinary = "/usr/local/bin/gpulayer"

// Each unit runs the command line its example config names in its first
// line, and that command accepts the example (every key a flag).
func TestSystemdUnits(t *testing.T) {
	for _, u := range systemdUnits {
		t.Run(u.unit, func(t *testing.T) {
			exe, args := execStart(t, filepath.Join("..", "..", "deploy", "systemd", u.unit))
			example := filepath.Join("..", "..", "deploy", u.example)
			documented := strings.Fields(strings.TrimPrefix(firstLine(t, example), "# gpulayer "))
			if exe != unitBinary || !slices.Equal(args, documented) {
				t.Fatalf("ExecStart=%s %s; %s documents gpulayer %s", exe, strings.Join(args, " "), u.example, strings.Join(documented, " "))
			}
			cmd, rest, err := newRootCmd().Find(args)
			if err != nil || cmd.RunE == nil {
				t.Fatalf("ExecStart names no command: %v", err)
			}
			// Load the example where the unit names its installed copy.
			i := slices.Index(rest, "--config")
			if i < 0 || i+1 >= len(rest) {
				t.Fatalf("ExecStart has no --config FILE: %q", rest)
			}
			rest[i+1] = example
			if err := parsed(t, cmd, rest...); err != nil {
				t.Fatalf("%s with %s: %v", cmd.CommandPath(), u.example, err)
			}
		})
	}
}

// systemd itself accepts the units, where systemd-analyze is installed.
func TestSystemdUnitsVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	// verify wants ExecStart's binary to exist: point it at the one
	// these tests built.
	dir := t.TempDir()
	var files []string
	for _, u := range systemdUnits {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", u.unit))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, u.unit)
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), unitBinary, binary)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, analyze, append([]string{"verify", "--man=no"}, files...)...).CombinedOutput()
	var about []string // what it says of our units, not of the host's
	for line := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(line, "gpulayer-") {
			about = append(about, line)
		}
	}
	var ee *exec.ExitError
	switch {
	case len(about) > 0:
		t.Fatalf("systemd-analyze verify:\n%s", strings.Join(about, "\n"))
	case errors.As(err, &ee):
		t.Skipf("systemd-analyze verify cannot run here (%v):\n%s", err, out)
	case err != nil:
		t.Fatal(err)
	}
}

// execStart returns the binary and arguments of a unit's ExecStart=.
func execStart(t *testing.T, unit string) (string, []string) {
	t.Helper()
	f, err := os.Open(unit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				t.Fatalf("%s: empty ExecStart", unit)
			}
			return fields[0], fields[1:]
		}
	}
	t.Fatalf("%s: no ExecStart (%v)", unit, sc.Err())
	return "", nil
}

func firstLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}
