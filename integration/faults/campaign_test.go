package faults

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestFaultCampaign runs fault schedules one after another, each on a
// fresh three-coordinator cluster (plan_test.go draws a schedule from its
// seed, schedule_test.go runs it), and stops at the first that fails. A
// schedule fails when the history of its requests (what the coordinators
// were sent) is not linearizable against the model of model_test.go, when
// the history of its calls (what a caller of sdk/client saw, one
// operation however many times the client sent it) is not, when an
// invariant of invariants_test.go breaks once everything has healed, when
// done work was discarded or ran again, or a superseded attempt's report
// was taken (donework_test.go), or when an acknowledged job does not end.
//
// A seed fixes a schedule's plan: its faults, jobs and what the workers do
// with each. The interleaving around the plan is the machine's, so a
// replay runs the same schedule, not the same execution step for step;
// run it a few times to see a timing-dependent failure again.
//
// Configuration (a flag wins over its environment variable):
//
//	GPULAYER_FAULT_SCHEDULES  -faults.schedules  schedules to run (default 50)
//	GPULAYER_FAULT_BUDGET     -faults.budget     no schedule starts after this much time (default 5m, as make test gives it)
//	GPULAYER_FAULT_SEED       -faults.seed       base seed; schedule i runs seed+i (default: from the clock, printed)
//	GPULAYER_FAULT_KEEP_GOING                    set to 1 to go on after a failing schedule
//
// In the default configuration (none of the first three set, no race
// detector, not -short) the test also fails if fewer schedules than asked
// fit in the budget. With -short it runs 3 schedules.
//
// Replay one schedule with the command a failure prints:
//
//	GPULAYER_FAULT_SEED=<seed> GPULAYER_FAULT_SCHEDULES=1 go test ./integration/faults -run TestFaultCampaign
func TestFaultCampaign(t *testing.T) {
	cfg := campaignConfig(t)
	t.Logf("fault campaign: base seed %d, %d schedules, budget %v (replay schedule i with GPULAYER_FAULT_SEED=%d+i)", cfg.seed, cfg.schedules, cfg.budget, cfg.seed)

	began := time.Now()
	bg := &background{}
	defer func() {
		for _, l := range bg.wait() {
			t.Errorf("while a finished schedule's cluster stopped: %s", l)
		}
	}()
	var (
		ran, failed int
		ops, jobs   int
		violations  int
		callViol    int
		resent      int
		skipped     int
		faults      = map[string]int{}
		seen        = map[string]int{}
		done        doneTally
		times       []time.Duration
	)
	for i := range cfg.schedules {
		if time.Since(began) > cfg.budget {
			t.Logf("budget of %v used: %d of %d schedules ran", cfg.budget, ran, cfg.schedules)
			break
		}
		seed := cfg.seed + uint64(i)
		p := newPlan(seed)
		var out outcomeOf
		start := time.Now()
		passed := t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			out = runSchedule(t, p, bg)
			reportSchedule(t, p, out)
		})
		took := time.Since(start)
		ran++
		times = append(times, took)
		ops += out.ops
		jobs += out.jobs
		violations += len(out.violations)
		callViol += len(out.callViolations)
		resent += out.resent
		skipped += out.skipped
		for k, n := range out.faults {
			faults[k] += n
		}
		for k, n := range out.seen {
			seen[k] += n
		}
		done.add(out.done)
		status := "ok"
		if !passed {
			failed++
			status = "FAILED"
		}
		t.Logf("schedule %d/%d seed=%d %s in %v (%s): %d jobs, %d operations checked, digest %s; %s", i+1, cfg.schedules, seed, status, took.Round(time.Millisecond), out.stages, out.jobs, out.ops, out.digest, p)
		if !passed {
			t.Logf("replay: GPULAYER_FAULT_SEED=%d GPULAYER_FAULT_SCHEDULES=1 go test ./integration/faults -run TestFaultCampaign -count=1 -v", seed)
			if !cfg.keepGoing {
				break
			}
		}
	}

	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	fs, ss := counts(faults), counts(seen)
	if ran > 0 {
		t.Logf("campaign: %d schedules in %v (per schedule: mean %v, median %v, max %v); %d failed; %d jobs; %d operations checked; "+
			"%d tasks not linearizable as requests, %d more only as calls; %d calls resent after an unknown outcome; faults: %s; %d not applied (no leader); seen: %s; done work: %s",
			ran, time.Since(began).Round(time.Millisecond), (total / time.Duration(ran)).Round(time.Millisecond), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond),
			failed, jobs, ops, violations, callViol, resent, fs, skipped, ss, done)
	}
	if ran < cfg.schedules && failed == 0 && cfg.strict {
		t.Errorf("only %d of %d schedules fit in %v: the workload is too large for this machine (run with GPULAYER_FAULT_BUDGET to allow more time)", ran, cfg.schedules, cfg.budget)
	}
}

// counts renders a tally sorted by name.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

type config struct {
	schedules int
	budget    time.Duration
	seed      uint64
	keepGoing bool
	// strict: the default configuration, where every schedule must fit.
	strict bool
}

var (
	flagSchedules = flag.Int("faults.schedules", 0, "fault schedules to run (env GPULAYER_FAULT_SCHEDULES, default 50)")
	flagBudget    = flag.Duration("faults.budget", 0, "start no schedule after this much time (env GPULAYER_FAULT_BUDGET, default 5m)")
	flagSeed      = flag.Uint64("faults.seed", 0, "base seed (env GPULAYER_FAULT_SEED, default from the clock)")
)

func campaignConfig(t *testing.T) config {
	// 5 minutes, as make test gives it: 50 schedules take about 4 on two
	// busy cores (a quorum loss makes its schedule about 2 s longer).
	cfg := config{schedules: 50, budget: 5 * time.Minute, seed: uint64(time.Now().UnixNano()), strict: true}
	if testing.Short() {
		cfg.schedules, cfg.strict = 3, false
	}
	if raceEnabled {
		cfg.strict = false
	}
	if v := os.Getenv("GPULAYER_FAULT_SCHEDULES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("GPULAYER_FAULT_SCHEDULES=%q: want a positive integer", v)
		}
		cfg.schedules, cfg.strict = n, false
	}
	if v := os.Getenv("GPULAYER_FAULT_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("GPULAYER_FAULT_BUDGET=%q: want a duration such as 5m", v)
		}
		cfg.budget, cfg.strict = d, false
	}
	if v := os.Getenv("GPULAYER_FAULT_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("GPULAYER_FAULT_SEED=%q: want an unsigned integer", v)
		}
		cfg.seed, cfg.strict = s, false
	}
	cfg.keepGoing = os.Getenv("GPULAYER_FAULT_KEEP_GOING") == "1"
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "faults.schedules":
			cfg.schedules, cfg.strict = max(*flagSchedules, 1), false
		case "faults.budget":
			cfg.budget, cfg.strict = *flagBudget, false
		case "faults.seed":
			cfg.seed, cfg.strict = *flagSeed, false
		}
	})
	return cfg
}

func verdict(v violation) string {
	if v.result == porcupine.Unknown {
		return "not decided in time (counted as a failure)"
	}
	return "not linearizable"
}

// visualize writes porcupine's page of a violation, for a browser.
func visualize(p plan, v violation, level string) string {
	page := filepath.Join(os.TempDir(), fmt.Sprintf("gpulayer-faults-%d-%s-%s.html", p.Seed, v.task, level))
	if err := porcupine.VisualizePath(taskModel, v.info, page); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return page
}

// reportSchedule fails a schedule that found anything, with what it found.
func reportSchedule(t *testing.T, p plan, out outcomeOf) {
	t.Helper()
	for _, pr := range out.problems {
		t.Errorf("%s", pr)
	}
	for i, v := range out.violations {
		if i == 3 {
			t.Errorf("... and %d more tasks whose histories are not linearizable", len(out.violations)-3)
			break
		}
		t.Errorf("task %s: the history of its requests is %s; visualization: %s\n%s", v.task, verdict(v), visualize(p, v, "requests"), v.report)
	}
	for i, v := range out.callViolations {
		if i == 3 {
			t.Errorf("... and %d more tasks whose calls are not linearizable", len(out.callViolations)-3)
			break
		}
		t.Errorf("task %s: its requests are linearizable, but the history of its calls, as the caller of sdk/client saw them, is %s: "+
			"sdk/client sent a write again after an answer that left its outcome unknown (no_leader for a proposal whose leader was deposed "+
			"before it committed, or a forward whose answer was lost), the first request took effect too, and the caller saw both; visualization: %s\n%s",
			v.task, verdict(v), visualize(p, v, "calls"), v.report)
	}
	if t.Failed() {
		t.Logf("plan: %s", p)
	}
}
