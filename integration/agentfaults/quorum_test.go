//go:build linux

package agentfaults

import (
	"context"
	"maps"
	"path/filepath"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/agent/spool"
	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
)

// campaignTweak is the campaign's coordinator configuration: fast
// heartbeats, and the lease grace a new leader gives every lease at the
// project's default (10 s), longer than an agent takes to come back
// after an outage (its start-up retries pause 5 s at most).
func campaignTweak(c *coordinator.Config) {
	fastLeases(c)
	c.LeaseGrace = 10 * time.Second
}

// quorumLoss kills two of the three coordinators while a task of the
// fault's agent runs, and keeps them down past the task's end and its
// lease, with the coordinators' clocks moved on by f.Step besides. The
// task's finish must wait in the agent's report spool and be taken once a
// leader is back: the task never runs again. With f.RestartAgent the
// agent is killed and started again during the outage, once the report
// is in its spool.
func (s *schedule) quorumLoss(ctx context.Context, f faultPlan, a *agentProc) {
	if !a.running() {
		return
	}
	atts := running(s.target(ctx, f, a, 20*time.Second))
	var down []*coordinatortest.Node
	if l := s.c.Leader(); l != nil {
		down = append(down, l)
	}
	for _, n := range s.c.Nodes {
		if len(down) < 2 && n.Running() && (len(down) == 0 || n != down[0]) {
			down = append(down, n)
		}
	}
	for _, n := range down {
		s.c.Kill(n)
	}
	s.log.Info("quorum lost", "killed", nodeIDs(down), "attempts", atts)
	if len(atts) > 0 && !poll(ctx, 20*time.Second, func() bool { return s.runsEnded(atts) }) {
		s.problem("quorum lost: the runs of %v did not end within 20 s", atts)
	}
	if f.RestartAgent && len(atts) > 0 {
		// Killed once every report is on disk (the spool is written
		// before anything is sent), then started again, all without a
		// quorum. Killed earlier, between a task's end and its report's
		// write, the agent would take that report with it: a fault the
		// campaign's kill-agent covers, not this one.
		if !poll(ctx, 10*time.Second, func() bool { return allSpooled(a.DataDir, atts) }) {
			s.problem("quorum lost: agent %s's spool held the reports of %v, not all of %v, 10 s after their tasks ended", a.opts.ID, spooled(a.DataDir), atts)
		}
		tree := a.Kill()
		// A task that started after the target was found runs on
		// with no end to report: killed with its agent, it is struck.
		s.strike(faultKill, a, running(tree), maps.Clone(atts))
		if !poll(ctx, orphanDeadline, func() bool { return len(liveOf(tree)) == 0 }) {
			s.problem("agent %s killed during the outage: its processes still run: %v", a.opts.ID, liveOf(tree))
		}
		a.start()
		s.log.Info("agent restarted during the outage", "agent", a.opts.ID, "reports", len(spooled(a.DataDir)))
	}
	if !wait(ctx, f.Down) {
		return
	}
	s.clockStep += f.Step
	for _, n := range s.c.Nodes {
		if n.Running() {
			s.stepClock(n, f.Step)
		}
	}
	for _, n := range down {
		s.restartNode(n)
	}
	s.c.WaitLeader(30 * time.Second)
	s.log.Info("quorum back", "clocks", s.clockStep)
	if f.RestartAgent && len(atts) > 0 {
		s.checkResumed(ctx, a)
	}
	if !poll(ctx, 30*time.Second, func() bool { return s.allOver(ctx, atts) }) {
		s.problem("quorum back: the attempts %v were neither finished nor lost within 30 s", atts)
	}
}

// restartNode starts a stopped coordinator again, with its clock moved
// on as far as the others' (clockStep).
func (s *schedule) restartNode(n *coordinatortest.Node) {
	s.c.Restart(n)
	if s.clockStep > 0 {
		s.stepClock(n, s.clockStep)
	}
}

func (s *schedule) stepClock(n *coordinatortest.Node, d time.Duration) {
	if out, err := n.Control("clock " + d.String()); err != nil {
		s.problem("step %s's clock by %v: %v (%s)", n.ID, d, err, out)
	}
}

func nodeIDs(ns []*coordinatortest.Node) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.ID
	}
	return ids
}

// runsEnded reports whether the task of every attempt in atts has
// recorded its end.
func (s *schedule) runsEnded(atts map[string]string) bool {
	evs, err := readEvents(s.shared)
	if err != nil {
		return false
	}
	ended := map[string]bool{}
	for _, e := range evs {
		if e.Kind == "end" {
			ended[e.Attempt] = true
		}
	}
	for att := range atts {
		if !ended[att] {
			return false
		}
	}
	return true
}

// tasksEnded reports whether the tasks of atts have ended (succeeded,
// failed or cancelled), whichever attempt ended them.
func (s *schedule) tasksEnded(ctx context.Context, atts map[string]string) bool {
	for _, task := range atts {
		s.mu.Lock()
		jobID := s.taskJob[task]
		s.mu.Unlock()
		if jobID == "" {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		j, err := s.admin.Job(qctx, jobID)
		cancel()
		if err != nil {
			return false
		}
		for _, tk := range j.Tasks {
			if tk.ID == task && !terminal(tk.State) {
				return false
			}
		}
	}
	return true
}

// unpinned keeps the attempts of atts whose tasks are not of the job
// keyed pinned: a fault's target job is pinned to the agent it strikes,
// so its retry waits for that agent (it is never handed to a worker not
// heard from since it lost the attempt); the others may end elsewhere.
func (s *schedule) unpinned(atts map[string]string, pinned string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for att, task := range atts {
		if job := s.taskJob[task]; job == "" || job != s.jobs[pinned] {
			out[att] = task
		}
	}
	return out
}

// spooled returns the attempts whose reports wait in an agent's spool.
func spooled(dataDir string) map[string]bool {
	recs, _ := spool.Peek(filepath.Join(dataDir, agent.ReportSpoolDir))
	out := make(map[string]bool, len(recs))
	for _, r := range recs {
		out[r.AttemptID] = true
	}
	return out
}

// allSpooled reports whether every attempt of atts has its report in the
// agent's spool.
func allSpooled(dataDir string, atts map[string]string) bool {
	have := spooled(dataDir)
	for att := range atts {
		if !have[att] {
			return false
		}
	}
	return true
}
