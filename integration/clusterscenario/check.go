package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

func terminal(state string) bool {
	switch state {
	case api.TaskSucceeded, api.TaskFailed, api.TaskCancelled:
		return true
	}
	return false
}

// waitTerminal waits until every acknowledged job has ended; if some do
// not, it logs what their tasks and attempts look like.
func (s *scenario) waitTerminal(ctx context.Context, ids []string) error {
	err := s.waitUntilEnded(ctx, ids)
	if err != nil {
		s.describeOpen(context.WithoutCancel(ctx), ids)
	}
	return err
}

// describeOpen logs the jobs that have not ended, with their attempts.
func (s *scenario) describeOpen(ctx context.Context, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	shown := 0
	for _, id := range ids {
		j, err := s.client.Job(ctx, id)
		if err != nil {
			s.logf("open job %s: %v", id, err)
			continue
		}
		if terminal(j.State) {
			continue
		}
		for _, t := range j.Tasks {
			var as []string
			for _, a := range t.Attempts {
				as = append(as, fmt.Sprintf("#%d %s on %s assigned %s started %q ended %q %s", a.Number, a.State, a.WorkerID, a.AssignedAt, a.StartedAt, a.EndedAt, a.Reason))
			}
			s.logf("open job %s (%s): task %s %s, attempts: %s", j.ID, j.Name, t.ID, t.State, strings.Join(as, "; "))
		}
		if shown++; shown >= 10 {
			break
		}
	}
	if ws, err := s.client.Workers(ctx); err == nil {
		for _, w := range ws {
			s.logf("worker %s: %s, running %v, last heartbeat %s", w.WorkerID, w.Status, w.RunningTasks, w.LastHeartbeat)
		}
	}
}

// stuckAfter is how long a task may sit assigned without starting, counted
// from its assignment or from the last leadership change, whichever is
// later, before the wait gives up on it. An agent starts an assigned echo
// task within milliseconds; an assignment whose answer was lost must lapse
// with its lease (jobLease, re-armed with the coordinator's 10 s grace when
// a leader takes office) and be handed out again.
const stuckAfter = jobLease + 10*time.Second + 30*time.Second

func (s *scenario) waitUntilEnded(ctx context.Context, ids []string) error {
	lastLog := time.Now()
	var stuck []string
	err := s.waitFor(ctx, "every job to end", finishTimeout, 500*time.Millisecond, func(ctx context.Context) (bool, string) {
		jobs, err := s.client.Jobs(ctx, 0)
		if err != nil {
			return false, err.Error()
		}
		byID := make(map[string]api.Job, len(jobs))
		for _, j := range jobs {
			byID[j.ID] = j
		}
		open := map[string]int{}
		var example string
		stuck = stuck[:0]
		for _, id := range ids {
			j, ok := byID[id]
			st := j.State
			if !ok {
				st = "missing"
			}
			if terminal(st) {
				continue
			}
			open[st]++
			example = id
			for _, t := range j.Tasks {
				if t.State != api.TaskAssigned || len(t.Attempts) == 0 {
					continue
				}
				a := t.Attempts[len(t.Attempts)-1]
				if at, err := api.ParseTime(a.AssignedAt); err == nil && time.Since(later(at, s.lastLeaderChange)) > stuckAfter {
					stuck = append(stuck, fmt.Sprintf("task %s (%s) assigned to %s at %s and never started", t.ID, j.Name, a.WorkerID, a.AssignedAt))
				}
			}
		}
		if len(open) == 0 {
			return true, ""
		}
		if len(stuck) > 0 {
			return true, ""
		}
		why := fmt.Sprintf("jobs not ended: %v (e.g. %s)", open, example)
		if time.Since(lastLog) > 10*time.Second {
			s.logf("%s", why)
			lastLog = time.Now()
		}
		return false, why
	})
	if err != nil {
		return err
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%d task(s) stuck in assigned for over %s, their worker heartbeating: %s", len(stuck), stuckAfter, strings.Join(stuck, "; "))
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// checkJobs checks every acknowledged job: it exists once, and its one
// task succeeded through exactly one succeeded attempt with no attempt
// still live. It returns how many jobs passed.
func (s *scenario) checkJobs(ctx context.Context, ids []string) (int, error) {
	var bad []string
	seen := map[string]int{}
	ok, retried := 0, 0
	for i, id := range ids {
		seen[id]++
		if seen[id] > 1 {
			bad = append(bad, fmt.Sprintf("job %d: id %s was acknowledged for two keys", i, id))
			continue
		}
		j, err := s.client.Job(ctx, id)
		if err != nil {
			bad = append(bad, fmt.Sprintf("job %d (%s): %v", i, id, err))
			continue
		}
		if why := taskProblem(j); why != "" {
			bad = append(bad, fmt.Sprintf("job %d (%s): %s", i, id, why))
			continue
		}
		if len(j.Tasks[0].Attempts) > 1 {
			retried++
		}
		ok++
	}

	// No job beyond the acknowledged ones: a retried submit must not
	// have created a second job.
	jobs, err := s.client.Jobs(ctx, 0)
	if err != nil {
		return ok, fmt.Errorf("listing jobs: %w", err)
	}
	ours := 0
	for _, j := range jobs {
		if strings.HasPrefix(j.IdempotencyKey, s.cfg.runID+"-") || strings.HasPrefix(j.Name, "cluster-") {
			ours++
		}
		if seen[j.ID] == 0 {
			bad = append(bad, fmt.Sprintf("job %s (%q, key %q) was never acknowledged to the submitter", j.ID, j.Name, j.IdempotencyKey))
		}
	}
	if ours != len(ids) {
		bad = append(bad, fmt.Sprintf("the cluster holds %d scenario jobs, %d were submitted", ours, len(ids)))
	}
	if retried > 0 {
		s.logf("%d tasks needed more than one attempt (lost or stale attempts, each still succeeded once)", retried)
	}
	if len(bad) > 0 {
		for _, b := range bad[:min(len(bad), 20)] {
			s.logf("violation: %s", b)
		}
		return ok, fmt.Errorf("%d of %d jobs violate the exactly-once invariant (first: %s)", len(bad), len(ids), bad[0])
	}
	return ok, nil
}

// taskProblem says what is wrong with a job that should have succeeded
// exactly once, or "".
func taskProblem(j api.Job) string {
	if j.State != api.TaskSucceeded {
		return fmt.Sprintf("job state %s", j.State)
	}
	if len(j.Tasks) != 1 {
		return fmt.Sprintf("%d tasks, want 1", len(j.Tasks))
	}
	t := j.Tasks[0]
	if t.State != api.TaskSucceeded {
		return fmt.Sprintf("task %s is %s (%s)", t.ID, t.State, t.Reason)
	}
	won, live := 0, 0
	var states []string
	for _, a := range t.Attempts {
		states = append(states, fmt.Sprintf("#%d %s on %s", a.Number, a.State, a.WorkerID))
		switch a.State {
		case api.TaskSucceeded:
			won++
			if t.SubmittedBy != "" && t.SubmittedBy != a.WorkerID {
				return fmt.Sprintf("task %s was finished by %s but its succeeded attempt ran on %s", t.ID, t.SubmittedBy, a.WorkerID)
			}
		case api.TaskAssigned, api.TaskRunning:
			live++
		}
	}
	if won != 1 || live != 0 {
		return fmt.Sprintf("task %s has %d succeeded and %d live attempts: %s", t.ID, won, live, strings.Join(states, ", "))
	}
	return ""
}

// checkConverged waits until every coordinator reports the same digest,
// applied index and job count.
func (s *scenario) checkConverged(ctx context.Context, n int, res *result) error {
	err := s.waitFor(ctx, "every coordinator to hold the same state", convergeTimeout, 200*time.Millisecond, func(ctx context.Context) (bool, string) {
		var first api.DigestResponse
		for i, nd := range s.cfg.nodes {
			d, err := s.probe.digest(ctx, nd)
			if err != nil {
				return false, err.Error()
			}
			if d.NodeID != nd.id {
				return false, fmt.Sprintf("%s answered as node %q", nd.url, d.NodeID)
			}
			if d.Jobs != n || d.Tasks != n {
				return false, fmt.Sprintf("%s holds %d jobs and %d tasks, want %d", nd.id, d.Jobs, d.Tasks, n)
			}
			if i == 0 {
				first = d
				continue
			}
			if d.AppliedIndex != first.AppliedIndex || d.Digest != first.Digest {
				return false, fmt.Sprintf("%s is at index %d digest %.12s, %s at %d digest %.12s", nd.id, d.AppliedIndex, d.Digest, first.NodeID, first.AppliedIndex, first.Digest)
			}
		}
		res.digest, res.applied, res.nodes = first.Digest, first.AppliedIndex, len(s.cfg.nodes)
		return true, ""
	})
	if err != nil {
		return err
	}
	s.logf("all %d coordinators at applied index %d, digest %s", res.nodes, res.applied, res.digest)
	return nil
}

// checkContainers checks that no coordinator or agent died on the way.
func (s *scenario) checkContainers(ctx context.Context) error {
	var errs []error
	names := make([]string, 0, len(s.cfg.nodes)+len(s.cfg.agents))
	for _, n := range s.cfg.nodes {
		names = append(names, n.container)
	}
	names = append(names, s.cfg.agents...)
	for _, c := range names {
		up, err := s.docker.running(ctx, c)
		if err != nil {
			errs = append(errs, err)
		} else if !up {
			errs = append(errs, fmt.Errorf("container %s is not running", c))
		}
	}
	return errors.Join(errs...)
}
