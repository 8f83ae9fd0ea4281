// Command bench measures GpuLayer against its targets: a three-coordinator
// cluster on loopback (real Raft over TCP, data dirs on disk, every
// coordinator its own process) driven by simulated agents that speak the
// real protocol through sdk/client with a no-op executor path, beside the
// references each figure is judged against (raw Raft, a bare net/http
// handler, a plain fork/exec).
//
//	go run ./bench                 # full run, writes bench/results.json
//	go run ./bench -quick          # every scenario briefly (under a minute)
//	go run ./bench -scenarios r1,s1 -out /tmp/r.json
//
// It prints one table, writes the same figures as JSON, and ends with one
// summary line. Targets are reported, not asserted; the exit status is
// non-zero only for functional errors (a task that never completes, a
// lease that lapsed while its worker heartbeated, a scenario that could
// not run).
//
// The same binary is re-executed for the child processes: a coordinator
// (__coordinator), the plain HTTP reference server (__plainhttp), a raw
// Raft node (__rawraft) and the built-in exec executor plugin (__plugin).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

var allScenarios = []string{"r1", "r2", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "q1", "e1"}

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "__") {
		if err := childMain(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(run())
}

type options struct {
	quick     bool
	out       string
	scenarios []string
	profiles  string
	devProf   bool
	keep      bool
	verbose   bool
	markdown  string
}

func parseFlags() (options, error) {
	var o options
	var list string
	flag.BoolVar(&o.quick, "quick", false, "run every scenario briefly (under a minute in all)")
	flag.StringVar(&o.out, "out", "bench/results.json", "where to write the JSON results")
	flag.StringVar(&list, "scenarios", "all", "comma separated: "+strings.Join(allScenarios, ","))
	flag.StringVar(&o.profiles, "profiles", "", "directory for CPU profiles (default: profiles/ beside -out)")
	flag.BoolVar(&o.devProf, "profile-dev", false, "E1/E4: build gpulayer with the benchpprof tag and save a CPU profile of the dev process over each burst")
	flag.BoolVar(&o.keep, "keep", false, "keep the data directories and child logs")
	flag.BoolVar(&o.verbose, "v", false, "log progress at debug level")
	flag.StringVar(&o.markdown, "md", "", "also write the table as Markdown here (for docs/performance.md)")
	flag.Parse()
	if list == "all" || list == "" {
		o.scenarios = allScenarios
	} else {
		for _, s := range strings.Split(list, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if !slices.Contains(allScenarios, s) {
				return o, fmt.Errorf("unknown scenario %q (have %s)", s, strings.Join(allScenarios, ","))
			}
			o.scenarios = append(o.scenarios, s)
		}
	}
	if o.profiles == "" {
		o.profiles = filepath.Join(filepath.Dir(o.out), "profiles")
	}
	return o, nil
}

func run() int {
	opts, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	level := slog.LevelInfo
	if opts.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	e, err := newEnv(opts, log)
	if err != nil {
		log.Error("setting up", "error", err)
		return 2
	}
	defer e.close()
	start := time.Now()
	e.report.StartedAt = start.UTC().Format(time.RFC3339)
	e.runAll(ctx)
	e.report.Machine.LoadAvgEnd = loadAvg()
	e.report.WallSeconds = float64(time.Since(start).Milliseconds()) / 1000

	fmt.Printf("machine: %d CPUs (%s), %s, load average %s → %s\n", e.report.Machine.NumCPU, e.report.Machine.CPUModel, e.report.Machine.GoVersion, e.report.Machine.LoadAvgStart, e.report.Machine.LoadAvgEnd)
	e.report.printTable(os.Stdout)
	if err := e.report.writeJSON(opts.out); err != nil {
		e.report.fail("write %s: %v", opts.out, err)
	}
	if opts.markdown != "" {
		if err := e.report.writeMarkdown(opts.markdown); err != nil {
			e.report.fail("write %s: %v", opts.markdown, err)
		}
	}
	fmt.Println(e.report.summary())
	if len(e.report.Failures) > 0 {
		if !opts.keep {
			e.keepOnFailure()
		}
		return 1
	}
	return 0
}

func machine() Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadAvgStart = loadAvg()
	return m
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
