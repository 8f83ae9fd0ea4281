package main

import (
	"regexp"
	"strings"
	"testing"
)

// job logs (and submit --wait) on a real dev: a gang of two ranks, run
// again when a rank failed, say whose each line
// is and where an attempt begins; --task, --tail, --since and --no-prefix
// filter and strip; garbage is a usage error.
func TestJobLogsAgainstDev(t *testing.T) {
	env := startDev(t)
	sub := run(t, env, "job", "submit", "--gang", "--count", "2", "--max-attempts", "2", "--wait", "--", "sh", "-c", `printf "rank $GPULAYER_TASK_INDEX "; sleep 0.1; echo says hi; exit 3`)
	if sub.code != 3 {
		t.Fatalf("submit: exit %d\n%s", sub.code, sub.stderr)
	}
	id := latestJob(t, env)
	logs := func(args ...string) result {
		t.Helper()
		r := run(t, env, append([]string{"job", "logs", id}, args...)...)
		if r.code != 0 {
			t.Fatalf("job logs %v: exit %d\n%s", args, r.code, r.stderr)
		}
		return r
	}
	all := logs().stdout
	// A rank may be stopped mid-line when its peer fails (the gang is
	// retried whole): its unfinished line ends where it stopped.
	lineRE := regexp.MustCompile(`^(\[t([01]) a([1-9])\] rank ([01]) (says hi)?|──── task ([01]) \(` + id + `-[01]\), attempt ([2-9]) ────)$`)
	// job logs, and submit --wait as it streamed.
	for _, out := range []string{all, sub.stdout} {
		separators := 0
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			m := lineRE.FindStringSubmatch(line)
			switch {
			case m == nil:
				t.Errorf("line %q is not whole or not prefixed:\n%s", line, out)
			case m[6] != "":
				separators++
			case m[2] != m[4]:
				t.Errorf("line %q is prefixed with another task's index", line)
			}
		}
		if separators < 2 || (!strings.Contains(out, "] rank 0 says hi\n") && !strings.Contains(out, "] rank 1 says hi\n")) {
			t.Errorf("the output of a retried gang:\n%s", out)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(logs("--task", "1", "--no-prefix").stdout, "\n"), "\n") {
		if !strings.HasPrefix(line, "rank 1 ") {
			t.Errorf("--task 1 --no-prefix printed %q", line)
		}
	}
	if got := logs("--task", id+"-0", "--tail", "1").stdout; strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "[t0 a") {
		t.Errorf("--task ID --tail 1: %q", got)
	}
	if got := logs("--since", "1h").stdout; got != all {
		t.Errorf("--since 1h: %q, want all of it", got)
	}
	if r := logs("--since", "2999-01-01T00:00:00Z"); r.stdout != "" || !strings.Contains(r.stderr, "has no output since") {
		t.Errorf("--since the future: %q %q", r.stdout, r.stderr)
	}
	for _, bad := range [][]string{{"--tail", "-2"}, {"--tail", "100001"}, {"--since", "yesterday"}, {"--since", "-1h"}, {"--task", "7"}} {
		if r := run(t, env, append([]string{"job", "logs", id}, bad...)...); r.code != 2 {
			t.Errorf("job logs %v: exit %d, want 2 (usage)\n%s", bad, r.code, r.stderr)
		}
	}
	// One task run once: the output as written, no prefix.
	one := run(t, env, "job", "submit", "--wait", "--", "sh", "-c", "printf 'a\\nb'")
	if got := logs0(t, env).stdout; one.code != 0 || got != "a\nb" {
		t.Errorf("one task: %q", got)
	}
}

// logs0 prints the newest job's logs.
func logs0(t *testing.T, env []string) result {
	t.Helper()
	return run(t, env, "job", "logs", latestJob(t, env))
}
