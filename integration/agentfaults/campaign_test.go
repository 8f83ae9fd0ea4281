//go:build linux

package agentfaults

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/agent"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// orphanDeadline is how long the processes of a killed agent may take to
// die: the plugin gets its parent-death signal at once and kills its
// tasks' process groups, which takes milliseconds (the rest is slack
// for a loaded machine). It is well below the lease, so that a process
// that survives is caught here before its task is handed out again.
const orphanDeadline = 1500 * time.Millisecond

// Seeds: schedule i runs seed GPULAYER_AGENT_FAULT_SEED+i (default
// defaultSeed+i), for GPULAYER_AGENT_FAULT_SCHEDULES schedules (default
// defaultSchedules).
const (
	defaultSeed      = 1
	defaultSchedules = 3
)

// TestRealAgentFaults runs schedules of faults against real agent
// processes and their real plugin processes, under a three-node
// coordinator cluster, and checks what the tasks saw and what the
// coordinators recorded. See the package documentation.
func TestRealAgentFaults(t *testing.T) {
	needTools(t)
	base := testenv.Uint(t, "GPULAYER_AGENT_FAULT_SEED", defaultSeed)
	n := testenv.Uint(t, "GPULAYER_AGENT_FAULT_SCHEDULES", defaultSchedules)
	for i := range n {
		seed := base + i
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			p := newPlan(seed)
			t.Log(p)
			defer func() {
				if t.Failed() {
					t.Logf("schedule failed; replay it with:\n  GPULAYER_AGENT_FAULT_SEED=%d GPULAYER_AGENT_FAULT_SCHEDULES=1 go test -race -count=1 -run TestRealAgentFaults -v ./integration/agentfaults/", seed)
				}
			}()
			runSchedule(t, p)
		})
	}
}

// schedule is one schedule's running world.
type schedule struct {
	t      *testing.T
	p      plan
	log    *slog.Logger
	c      *coordinatortest.Cluster
	admin  *client.Client
	shared string
	agents []*agentProc
	creds  [][]byte // each agent's credential file after its first start
	start  time.Time

	// clockStep is how far quorum-loss faults have moved the
	// coordinators' clocks; a coordinator restarted later gets the same
	// step (restartNode), so that no two disagree.
	clockStep time.Duration

	mu       sync.Mutex
	jobs     map[string]string // key -> job id, once acknowledged
	taskJob  map[string]string // task id -> job id
	hits     []hitAttempt
	problems []string
}

func (s *schedule) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.log.Warn("problem", "what", msg)
	s.mu.Lock()
	s.problems = append(s.problems, msg)
	s.mu.Unlock()
}

func runSchedule(t *testing.T, p plan) {
	s := &schedule{t: t, p: p, jobs: map[string]string{}, taskJob: map[string]string{},
		log: slog.New(slog.NewTextHandler(testWriter{t}, nil)).With("seed", p.Seed)}
	began := time.Now()
	s.c = coordinatortest.StartCluster(t, 3, coordinatortest.Options{Tweak: campaignTweak, Processes: true})
	s.log.Info("cluster up", "after", time.Since(began).Round(time.Millisecond))
	s.admin = s.c.Client(s.c.AdminToken)
	s.shared = sharedDir(t)
	root := rootDir(t)
	for i := range p.Agents {
		o := agentOpts{
			ID: fmt.Sprintf("a%d", i), Coordinators: s.c.URLs(), JoinToken: s.c.JoinToken, Root: root,
			UIDBase: campaignUIDBase + 10*i, MaxTasks: agentSlots, StopGrace: time.Second,
		}
		if p.SharedTaskUser[i] {
			o.TaskUser = strconv.Itoa(campaignUIDBase + 500 + i)
		}
		s.agents = append(s.agents, startAgent(t, o))
	}
	s.waitWorkers(60 * time.Second)
	for _, a := range s.agents {
		b, err := os.ReadFile(filepath.Join(a.DataDir, agent.CredentialFile))
		if err != nil {
			t.Fatalf("agent %s: %v", a.opts.ID, err)
		}
		s.creds = append(s.creds, b)
	}
	registered := s.registeredAt()
	s.log.Info("agents ready", "after", time.Since(began).Round(time.Millisecond))
	// Agents stop before the coordinators do (the cleanups of nodes
	// restarted by a fault would run first): a coordinator's graceful
	// stop waits for the agents' long polls.
	defer s.stopAgents()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s.start = time.Now()
	var wg sync.WaitGroup
	wg.Go(func() { s.submitAll(ctx) })
	wg.Go(func() {
		for _, f := range p.Faults {
			if !wait(ctx, f.Gap) {
				return
			}
			s.log.Info("fault", "kind", f.Kind, "agent", f.Agent, "at", time.Since(s.start).Round(time.Millisecond))
			s.inject(ctx, f)
		}
	})
	wg.Wait()

	s.heal()
	views := s.waitJobs(60 * time.Second)
	s.checkNoLeftovers(views, 10*time.Second)
	for _, a := range s.agents {
		if msg := a.unexpectedExit(); msg != "" {
			s.problem("%s", msg)
		}
	}
	if now := s.registeredAt(); !maps.Equal(now, registered) {
		s.problem("workers changed across the faults: registered %v, now %v (a restarted agent must resume as the same worker)", registered, now)
	}
	evs, err := readEvents(s.shared)
	if err != nil {
		s.problem("events: %v", err)
	}
	plans := map[string]jobPlan{}
	for _, j := range p.Jobs {
		plans[j.Key] = j
	}
	for _, f := range p.Faults {
		if f.Target.Key != "" {
			plans[f.Target.Key] = f.Target
		}
	}
	s.mu.Lock()
	o := observed{Plans: plans, Jobs: views, Events: evs, Hits: slices.Clone(s.hits), Problems: slices.Clone(s.problems)}
	s.mu.Unlock()
	violations := check(o)
	s.summarize(o)
	for _, v := range violations {
		t.Errorf("violation: %s", v)
	}
	if len(violations) > 0 {
		s.keepRecords(o)
	}
}

// keepRecords saves what a failed schedule leaves to read: every agent's
// log, the events, and the final job views, in a directory that outlives
// the test.
func (s *schedule) keepRecords(o observed) {
	dir, err := os.MkdirTemp("", fmt.Sprintf("gpulayer-agentfaults-seed%d-", s.p.Seed))
	if err != nil {
		s.t.Log(err)
		return
	}
	for _, a := range s.agents {
		_ = os.WriteFile(filepath.Join(dir, "agent-"+a.opts.ID+".log"), []byte(a.logs.String()), 0o644)
	}
	if b, err := os.ReadFile(filepath.Join(s.shared, "events")); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "events"), b, 0o644)
	}
	var views strings.Builder
	keys := slices.Sorted(maps.Keys(o.Jobs))
	for _, k := range keys {
		j := o.Jobs[k]
		for _, tk := range j.Tasks {
			fmt.Fprintf(&views, "%s job %s task %s: %s exit %s (%s)\n", k, j.ID, tk.ID, tk.State, fmtCode(tk.ExitCode), tk.Reason)
			for _, a := range tk.Attempts {
				fmt.Fprintf(&views, "    attempt %d %s on %s: %s exit %s devices %v assigned %s started %s ended %s (%s)\n",
					a.Number, a.AttemptID, a.WorkerID, a.State, fmtCode(a.ExitCode), a.Devices, a.AssignedAt, a.StartedAt, a.EndedAt, a.Reason)
			}
		}
	}
	_ = os.WriteFile(filepath.Join(dir, "jobs"), []byte(views.String()), 0o644)
	s.t.Logf("agent logs, events and job views kept in %s", dir)
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// wait waits for d (a gap in the schedule, not a synchronisation), or
// ctx's end (false).
func wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// until waits until d after the start, or ctx's end (false).
func (s *schedule) until(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(time.Until(s.start.Add(d)))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// poll calls cond every 20 ms until it holds (true) or timeout passes.
func poll(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (s *schedule) waitWorkers(timeout time.Duration) {
	s.t.Helper()
	coordinatortest.WaitFor(s.t, timeout, "every agent to register, be ready and keep its credential", func() bool {
		for _, a := range s.agents {
			if _, err := os.Stat(filepath.Join(a.DataDir, agent.CredentialFile)); err != nil {
				return false
			}
		}
		ws, err := s.admin.Workers(s.t.Context())
		if err != nil {
			return false
		}
		ready := 0
		for _, w := range ws {
			if w.Status == api.WorkerReady && len(w.Devices) > 0 {
				ready++
			}
		}
		return ready == len(s.agents)
	})
}

// registeredAt maps each worker to when it registered.
func (s *schedule) registeredAt() map[string]string {
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	ws, err := s.admin.Workers(ctx)
	if err != nil {
		s.problem("listing workers: %v", err)
		return nil
	}
	out := map[string]string{}
	for _, w := range ws {
		out[w.WorkerID] = w.RegisteredAt
	}
	return out
}

// submitAll submits the plan's jobs at their times.
func (s *schedule) submitAll(ctx context.Context) {
	for _, jp := range s.p.Jobs {
		if !s.until(ctx, jp.At) {
			return
		}
		s.submit(ctx, jp, "")
	}
}

// submit submits one job, pinned to a worker if one is given, and
// returns its id, or "" if it was not acknowledged. A job is acknowledged
// once a submit of it was answered; its idempotency key makes resends
// (by the client, across leader changes) return the same job.
func (s *schedule) submit(ctx context.Context, jp jobPlan, worker string) string {
	spec := api.JobSpec{
		Name: jp.Key, Executor: "exec", Config: execConfig(s.t, s.shared, jp.Key, jp.Sleep.Seconds(), jp.Exit),
		LeaseSeconds: leaseSeconds, MaxAttempts: maxAttempts,
		IdempotencyKey: fmt.Sprintf("agentfaults-%d-%s", s.p.Seed, jp.Key),
	}
	if jp.GPUs > 0 {
		spec.Resources = &api.Resources{GPUs: jp.GPUs}
	}
	if worker != "" {
		spec.Target = &api.Target{Kind: api.TargetWorker, ID: worker}
	}
	var job api.Job
	var err error
	for range 3 {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		job, err = s.admin.SubmitJob(sctx, spec)
		cancel()
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		s.log.Warn("job not acknowledged", "key", jp.Key, "error", err)
		return ""
	}
	s.mu.Lock()
	s.jobs[jp.Key] = job.ID
	for _, tk := range job.Tasks {
		s.taskJob[tk.ID] = job.ID
	}
	s.mu.Unlock()
	return job.ID
}

// running lists the attempts whose processes run below procs.
func running(procs []proc) map[string]string {
	out := map[string]string{} // attempt id -> task id
	for _, p := range procs {
		if task, att, ok := attemptOf(p); ok {
			out[att] = task
		}
	}
	return out
}

// target submits the fault's job, pinned to agent a, and waits (up to
// timeout) until its task runs there. It returns the processes below the
// agent then, or nil if the job did not come to run.
func (s *schedule) target(ctx context.Context, f faultPlan, a *agentProc, timeout time.Duration) []proc {
	id := s.submit(ctx, f.Target, a.opts.ID)
	if id == "" {
		return nil
	}
	s.mu.Lock()
	var tasks []string
	for task, job := range s.taskJob {
		if job == id {
			tasks = append(tasks, task)
		}
	}
	s.mu.Unlock()
	var tree []proc
	found := poll(ctx, timeout, func() bool {
		tree = a.Tree()
		for _, task := range running(tree) {
			if slices.Contains(tasks, task) {
				return true
			}
		}
		return false
	})
	if !found {
		s.log.Warn("the fault's job did not run on its agent in time", "agent", a.opts.ID, "job", f.Target.Key)
		return nil
	}
	return tree
}

func (s *schedule) inject(ctx context.Context, f faultPlan) {
	a := s.agents[f.Agent]
	switch f.Kind {
	case faultPause:
		s.pause(ctx, f, a)
	case faultKill:
		s.kill(ctx, f, a)
	case faultCrashPlugin:
		s.crashPlugin(ctx, f, a)
	case faultRestartLeader:
		s.restartLeader(ctx, f)
	case faultQuorumLoss:
		s.quorumLoss(ctx, f, a)
	}
}

// pause stops an agent (not its plugin or tasks) until the coordinator
// has counted the attempts it ran lost (or they ended), then resumes it.
// Every attempt the coordinator counts active on the agent while it is
// stopped is struck: a paused agent reports nothing, so even one whose
// process ended the moment before the stop (or one the agent's plugin
// started after it, on a call already made) may be lost, and that is the
// fault's doing, not a lost report.
func (s *schedule) pause(ctx context.Context, f faultPlan, a *agentProc) {
	if !a.running() {
		return
	}
	atts := running(s.target(ctx, f, a, 20*time.Second))
	if err := a.Pause(); err != nil {
		s.problem("pause %s: %v", a.opts.ID, err)
		return
	}
	s.strike(faultPause, a, atts, nil)
	if active, ok := s.activeOn(ctx, a.opts.ID); ok {
		s.strike(faultPause, a, active, atts)
	}
	s.log.Info("agent paused", "agent", a.opts.ID, "attempts", atts)
	if len(atts) == 0 {
		// Nothing of its own to lose: a pause past one lease.
		timer := time.NewTimer(leaseSeconds*time.Second + 500*time.Millisecond)
		select {
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	} else if !poll(ctx, 20*time.Second, func() bool {
		active, ok := s.activeOn(ctx, a.opts.ID)
		s.strike(faultPause, a, active, atts)
		return ok && len(active) == 0
	}) {
		s.problem("agent %s paused: its attempts %v were neither lost nor ended within 20 s", a.opts.ID, atts)
	} else if others := s.unpinned(atts, f.Target.Key); f.ThawAfterRetry && !poll(ctx, 30*time.Second, func() bool { return s.tasksEnded(ctx, others) }) {
		s.problem("agent %s paused: the tasks of its attempts %v did not end elsewhere within 30 s", a.opts.ID, others)
	}
	if active, ok := s.activeOn(ctx, a.opts.ID); ok {
		s.strike(faultPause, a, active, atts)
	}
	if err := a.Resume(); err != nil {
		s.problem("resume %s: %v", a.opts.ID, err)
	}
	s.log.Info("agent resumed", "agent", a.opts.ID)
}

// strike records the attempts of found as struck by a fault on agent a,
// and adds them to into (when not nil); an attempt already in into is not
// recorded twice.
func (s *schedule) strike(kind string, a *agentProc, found, into map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for att, task := range found {
		if into != nil {
			if _, seen := into[att]; seen {
				continue
			}
			into[att] = task
		}
		s.hits = append(s.hits, hitAttempt{Fault: kind, Agent: a.opts.ID, TaskID: task, AttemptID: att})
	}
}

// activeOn lists the attempts (id -> task id) the coordinator counts
// assigned or running on a worker, over every acknowledged job; false if
// a job could not be read.
func (s *schedule) activeOn(ctx context.Context, workerID string) (map[string]string, bool) {
	s.mu.Lock()
	ids := slices.Collect(maps.Values(s.jobs))
	s.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		j, err := s.admin.Job(qctx, id)
		cancel()
		if err != nil {
			return out, false
		}
		for _, tk := range j.Tasks {
			for _, at := range tk.Attempts {
				if at.WorkerID == workerID && (at.State == api.TaskAssigned || at.State == api.TaskRunning) {
					out[at.AttemptID] = tk.ID
				}
			}
		}
	}
	return out, true
}

// allOver reports whether the coordinator counts none of atts active.
func (s *schedule) allOver(ctx context.Context, atts map[string]string) bool {
	for att, task := range atts {
		s.mu.Lock()
		jobID := s.taskJob[task]
		s.mu.Unlock()
		if jobID == "" {
			continue // not acknowledged yet: nothing to wait on
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		j, err := s.admin.Job(qctx, jobID)
		cancel()
		if err != nil {
			return false
		}
		for _, tk := range j.Tasks {
			for _, at := range tk.Attempts {
				if at.AttemptID == att && (at.State == api.TaskAssigned || at.State == api.TaskRunning) {
					return false
				}
			}
		}
	}
	return true
}

// kill SIGKILLs an agent, checks that its plugin and task processes died
// with it, and restarts it on the same data dir after f.Down: it must
// resume as the same worker.
func (s *schedule) kill(ctx context.Context, f faultPlan, a *agentProc) {
	if !a.running() {
		return
	}
	s.target(ctx, f, a, 20*time.Second)
	tree := a.Kill()
	atts := running(tree)
	s.strike(faultKill, a, atts, nil)
	// An attempt whose process ended just before the kill, but whose
	// report was not yet in the spool, went with the agent: it is struck
	// too. One whose report is in the spool is not: the restarted agent
	// must report it.
	if active, ok := s.activeOn(ctx, a.opts.ID); ok {
		onDisk := spooled(a.DataDir)
		for att := range active {
			if onDisk[att] {
				delete(active, att)
			}
		}
		s.strike(faultKill, a, active, atts)
	}
	s.log.Info("agent killed", "agent", a.opts.ID, "attempts", atts, "processes", len(tree))
	if !poll(ctx, orphanDeadline, func() bool { return len(liveOf(tree)) == 0 }) {
		s.problem("agent %s killed with SIGKILL: %v later these of its processes still run: %v", a.opts.ID, orphanDeadline, liveOf(tree))
	}
	timer := time.NewTimer(f.Down)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	s.restartAgent(ctx, a)
}

// restartAgent starts a stopped agent again and checks that it resumed
// as the same worker with the same credential.
func (s *schedule) restartAgent(ctx context.Context, a *agentProc) {
	a.start()
	s.checkResumed(ctx, a)
}

// checkResumed waits for a restarted agent to resume its worker
// credential, and checks that the credential file is the one it had.
func (s *schedule) checkResumed(ctx context.Context, a *agentProc) {
	i := slices.Index(s.agents, a)
	life := fmt.Sprintf("=== agent %s life %d ===", a.opts.ID, a.Life())
	resumed := poll(ctx, 30*time.Second, func() bool {
		l := a.logs.String()
		k := strings.LastIndex(l, life)
		return k >= 0 && strings.Contains(l[k:], "resumed worker credential")
	})
	if !resumed {
		s.problem("agent %s restarted on its data dir did not resume its worker credential:\n%s", a.opts.ID, lastBytes(a.logs.String(), 3000))
	}
	if b, err := os.ReadFile(filepath.Join(a.DataDir, agent.CredentialFile)); err != nil || string(b) != string(s.creds[i]) {
		s.problem("agent %s: its credential file changed across the restart (err %v)", a.opts.ID, err)
	}
	s.log.Info("agent restarted", "agent", a.opts.ID, "life", a.Life())
}

// crashPlugin SIGKILLs the plugin process of an agent while it runs a
// task, and checks that the task's processes are gone soon after.
func (s *schedule) crashPlugin(ctx context.Context, f faultPlan, a *agentProc) {
	s.target(ctx, f, a, 20*time.Second)
	var victim proc
	var below []proc
	poll(ctx, 5*time.Second, func() bool {
		for _, pl := range a.Plugins() {
			d := descendants(pl.PID)
			if len(running(d)) > 0 {
				victim, below = pl, d
				return true
			}
		}
		return false
	})
	if victim.PID == 0 {
		s.log.Info("no plugin ran a task; crash skipped", "agent", a.opts.ID)
		return
	}
	a.Tree() // remember the processes, for cleanup
	atts := running(below)
	s.mu.Lock()
	for att, task := range atts {
		s.hits = append(s.hits, hitAttempt{Fault: faultCrashPlugin, Agent: a.opts.ID, TaskID: task, AttemptID: att})
	}
	s.mu.Unlock()
	killProc(victim)
	s.log.Info("plugin killed", "agent", a.opts.ID, "pid", victim.PID, "attempts", atts)
	if !poll(ctx, 10*time.Second, func() bool { return len(liveOf(below)) == 0 }) {
		s.problem("plugin of agent %s killed: 10 s later its tasks' processes still run: %v", a.opts.ID, liveOf(below))
	}
}

// restartLeader kills the leading coordinator's process (SIGKILL) and
// starts it again on its data dir once another leads (or f.Down plus ten
// seconds have passed).
func (s *schedule) restartLeader(ctx context.Context, f faultPlan) {
	l := s.c.Leader()
	if l == nil {
		return
	}
	s.c.Kill(l)
	s.log.Info("leader killed", "node", l.ID)
	poll(ctx, f.Down+10*time.Second, func() bool {
		n := s.c.Leader()
		return n != nil && n != l
	})
	s.restartNode(l)
	s.log.Info("node restarted", "node", l.ID)
}

// stopAgents stops every agent with SIGTERM, all at once.
func (s *schedule) stopAgents() {
	var wg sync.WaitGroup
	for _, a := range s.agents {
		if a.running() {
			wg.Go(func() {
				if err := a.Stop(30 * time.Second); err != nil {
					s.t.Error(err)
				}
			})
		}
	}
	wg.Wait()
}

// heal brings every agent and coordinator back.
func (s *schedule) heal() {
	for _, a := range s.agents {
		if !a.running() {
			s.restartAgent(s.t.Context(), a)
		}
		_ = a.Resume()
	}
	for _, n := range s.c.Nodes {
		if !n.Running() {
			s.restartNode(n)
		}
	}
	s.c.WaitLeader(30 * time.Second)
}

// waitJobs polls every acknowledged job until all have ended or timeout
// passed, and returns their last views by key.
func (s *schedule) waitJobs(timeout time.Duration) map[string]api.Job {
	s.mu.Lock()
	ids := map[string]string{}
	for k, v := range s.jobs {
		ids[k] = v
	}
	s.mu.Unlock()
	views := map[string]api.Job{}
	ctx := s.t.Context()
	ok := poll(ctx, timeout, func() bool {
		done := true
		for key, id := range ids {
			if j, seen := views[key]; seen && allEnded(j) {
				continue
			}
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			j, err := s.admin.Job(qctx, id)
			cancel()
			if err != nil {
				done = false
				continue
			}
			views[key] = j
			done = done && allEnded(j)
		}
		return done
	})
	if !ok {
		s.log.Warn("jobs still running after the wait", "timeout", timeout)
	}
	for key := range ids {
		if _, seen := views[key]; !seen {
			s.problem("job %s (%s) could not be read", key, ids[key])
		}
	}
	return views
}

func allEnded(j api.Job) bool {
	for _, tk := range j.Tasks {
		if !terminal(tk.State) {
			return false
		}
	}
	return len(j.Tasks) > 0
}

// checkNoLeftovers: once every job ended, no process of any of their
// attempts may still run (within timeout, for the agents to reap).
func (s *schedule) checkNoLeftovers(views map[string]api.Job, timeout time.Duration) {
	ours := map[string]string{}
	for key, j := range views {
		if !allEnded(j) {
			return // reported as a job that did not end
		}
		for _, tk := range j.Tasks {
			for _, a := range tk.Attempts {
				ours[a.AttemptID] = key
			}
		}
	}
	var left []string
	ok := poll(s.t.Context(), timeout, func() bool {
		left = left[:0]
		for _, p := range allProcs() {
			if _, att, isTask := attemptOf(p); isTask && ours[att] != "" {
				left = append(left, fmt.Sprintf("%s of %s attempt %s", p, ours[att], att))
			}
		}
		return len(left) == 0
	})
	if !ok {
		s.problem("every job ended, yet %v later processes of their attempts still run: %v", timeout, left)
		for _, p := range allProcs() {
			if _, att, isTask := attemptOf(p); isTask && ours[att] != "" {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	}
}

// summarize logs what the schedule did, for the record.
func (s *schedule) summarize(o observed) {
	states := map[string]int{}
	attempts, lost := 0, 0
	for _, j := range o.Jobs {
		for _, tk := range j.Tasks {
			states[tk.State]++
			attempts += len(tk.Attempts)
			for _, a := range tk.Attempts {
				if a.State == api.AttemptLost {
					lost++
				}
			}
		}
	}
	s.log.Info("schedule done", "jobs", len(o.Jobs), "of", len(s.p.Jobs), "states", states, "attempts", attempts, "lost", lost,
		"events", len(o.Events), "hits", len(o.Hits), "elapsed", time.Since(s.start).Round(time.Millisecond))
}
