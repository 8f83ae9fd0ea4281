// Command walcmp compares the two Raft log stores the coordinator could
// use, raft-boltdb (today's) and raft-wal, with bench/rawraft's R1 setup:
// three node processes on loopback, the coordinator's Raft settings, the
// same entry size, concurrency 1, 4 and 64. It lives in its own module
// because adding raft-wal v0.4.0 to the main go.mod raises three indirect
// dependencies (go-immutable-radix, golang-lru, bbolt), which the main
// module must not take on for a benchmark.
//
//	cd bench/walcmp && go run . [-rounds 2] [-duration 5s] [-out results.json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"

	"github.com/gpulayer/gpulayer/bench/rawraft"
)

var stores = map[string]rawraft.StoreFactory{
	"boltdb": func(dir string) (rawraft.Store, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		return raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	},
	"wal": func(dir string) (rawraft.Store, error) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		return wal.Open(dir)
	},
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "__rawraft" {
		if err := rawraft.ChildMain(os.Args[2:], stores); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		slog.Error("walcmp", "error", err)
		os.Exit(1)
	}
}

func run() error {
	// raft-wal's dependencies redirect the standard logger; log directly.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	rounds := flag.Int("rounds", 2, "alternating rounds per store")
	dur := flag.Duration("duration", 5*time.Second, "measured time per concurrency")
	warm := flag.Duration("warmup", time.Second, "unmeasured time per concurrency")
	entry := flag.Int("entry-size", 205, "bytes per entry (the mean S1 command; go run ./bench prints it in R1)")
	out := flag.String("out", "", "also write the results as JSON here")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "walcmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	var results []rawraft.Result
	for r := range *rounds {
		for _, name := range []string{"boltdb", "wal"} {
			slog.Info("measuring", "store", name, "round", r+1)
			res, err := rawraft.Measure(ctx, rawraft.Config{
				Exe: exe, Args: []string{"__rawraft"}, Dir: filepath.Join(root, fmt.Sprintf("%s-%d", name, r)),
				Store: name, EntrySize: *entry, Concurrency: []int{1, 4, 64},
				Duration: *dur, Warmup: *warm, Stderr: os.Stderr,
			})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			results = append(results, res)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("raft log store comparison: %d CPUs, %s, load average %s\n", runtime.NumCPU(), runtime.Version(), strings.Join(strings.Fields(string(load))[:3], " "))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STORE\tROUND\tCONCURRENCY\tWRITES/S\tP50 MS\tP99 MS")
	for i, res := range results {
		for _, run := range res.Runs {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.2f\n", res.Store, i/2+1, run.Concurrency, run.WritesPerSec, run.Latency.P50MS, run.Latency.P99MS)
		}
	}
	tw.Flush()
	if *out != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		return os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	return nil
}
