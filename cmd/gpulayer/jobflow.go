package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/spf13/pflag"
)

// flowFlags are `job submit`'s --parallelism and --depends-on.
type flowFlags struct {
	parallelism int
	dependsOn   []string
}

func (f *flowFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.parallelism, "parallelism", 0, "run at most this many of the job's tasks at once (1..--count; 0: no bound); each task sees GPULAYER_TASK_INDEX and GPULAYER_TASK_COUNT")
	fs.StringArrayVar(&f.dependsOn, "depends-on", nil, "JOB[:CONDITION]: start only once job JOB ended succeeded (the default), failed or finished (either way); the job is cancelled if the condition can no longer hold; repeatable, at most 64")
}

// apply sets the spec's parallelism and dependencies, refusing what the
// coordinator would.
func (f *flowFlags) apply(spec *api.JobSpec) error {
	if f.parallelism != 0 {
		count := max(spec.Count, 1)
		if f.parallelism < 1 || f.parallelism > count {
			return usagef("--parallelism %d: give 1 to --count (%d), or leave it out for no bound", f.parallelism, count)
		}
		if spec.Gang && f.parallelism < count {
			return usagef("--parallelism %d with --gang: a gang runs whole, so it cannot run fewer than --count (%d) tasks at once", f.parallelism, count)
		}
		p := f.parallelism
		spec.Parallelism = &p
	}
	if len(f.dependsOn) > api.MaxDependencies {
		return usagef("--depends-on given %d times, at most %d", len(f.dependsOn), api.MaxDependencies)
	}
	for _, v := range f.dependsOn {
		d, err := parseDependency(v)
		if err != nil {
			return err
		}
		spec.DependsOn = append(spec.DependsOn, d)
	}
	return nil
}

// parseDependency reads JOB[:CONDITION].
func parseDependency(v string) (api.Dependency, error) {
	job, cond, found := strings.Cut(v, ":")
	if !found {
		cond = api.DependSucceeded
	}
	switch {
	case job == "":
		return api.Dependency{}, usagef("--depends-on %q: give a job id, then optionally :succeeded, :failed or :finished", v)
	case cond != api.DependSucceeded && cond != api.DependFailed && cond != api.DependFinished:
		return api.Dependency{}, usagef("--depends-on %q: the condition must be succeeded, failed or finished", v)
	}
	return api.Dependency{Job: job, Condition: cond}, nil
}

// describeFlow writes a job's parallelism and dependencies for job show.
func describeFlow(w io.Writer, j api.Job) {
	if p := j.Parallelism; p != nil {
		fmt.Fprintf(w, "  parallelism=%d", *p)
	}
	for _, d := range j.DependsOn {
		fmt.Fprintf(w, "  depends_on=%s:%s", cell(d.Job), cell(d.Condition))
	}
}
