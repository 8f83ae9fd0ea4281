package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Host hands out executors by name (the plugin host).
type Host interface {
	Get(ctx context.Context, name string) (executor.Executor, error)
}

// Coordinator is the part of the client a runner uses.
type Coordinator interface {
	StartWith(ctx context.Context, taskID string, req api.StartRequest) error
	AppendLogs(ctx context.Context, taskID string, req api.LogsRequest) error
	Finish(ctx context.Context, taskID string, req api.FinishRequest) (api.Task, error)
	Fail(ctx context.Context, taskID string, req api.FailRequest) (api.Task, error)
	Rendezvous(ctx context.Context, taskID string, req api.RendezvousRequest) (api.RendezvousResponse, error)
}

var _ Coordinator = (*client.Client)(nil)

// Leases tells the runner whether an attempt's lease still holds.
type Leases interface {
	// Hold returns nil once the attempt's lease is known to hold long
	// enough for its process to start and be reported running (renewing
	// it if need be), or an error when stop is closed or ctx ends first.
	Hold(ctx context.Context, attemptID string, stop <-chan struct{}) error
}

// Config configures a Runner.
type Config struct {
	Host        Host
	Coordinator Coordinator
	// WorkRoot is where each task's own directory (HOME, the default
	// working dir) is made; it must exist. With Users switching users,
	// the task users must be able to search it (mode 0711).
	WorkRoot string
	// Users hands out the user each task runs as; nil runs tasks as the
	// agent's own user (SharedUser).
	Users Users
	// StopGrace is how long a stopped task gets between the polite signal
	// and the kill.
	StopGrace time.Duration
	// Leases, when set, is asked before each task's process starts;
	// nil starts it at once.
	Leases Leases
	// Advertise is the address gang members on this host give their
	// peers (rendezvous); empty: 127.0.0.1.
	Advertise string
	// Artifacts fetches a task's inputs and uploads its outputs (the
	// coordinator client); nil: a task with inputs fails to stage, one
	// with outputs finishes without them.
	Artifacts Artifacts
	// Preflight checks a task's GPUs before it starts when its job asks
	// (Assignment.Preflight), within PreflightBound
	// (DefaultPreflightBound when zero); nil: such tasks are told the
	// checks were skipped (preflight.go).
	Preflight      Preflight
	PreflightBound time.Duration
	Clock          clock.Clock
	Logger         *slog.Logger
	// MPS, when set, says at each task's start the pipe directory of the
	// MPS control daemon serving this host's GPUs, or "" when none serves
	// them now: a shared task is given it and its share as MPS's pinned
	// device memory limit, and an enforced share fails without it
	// (share.go). Nil: no MPS.
	MPS func() string
	// Sandbox is what each task's sandbox hides and limits (sandbox.go).
	Sandbox SandboxConfig
	// FenceDevices, when set, returns the device files a task given the
	// devices given (GPU or MIG UUIDs) must not open: its sandbox covers
	// them. Nil: none are covered.
	FenceDevices func(given []string) []string
	// CDI, when set, returns the CDI names of an assignment's devices and
	// the directory of the spec that describes them, once that spec
	// describes them (a share's device is written for it): the task is
	// told them in Task.Env (executor.EnvCDIDevices, EnvCDIDir), for an
	// executor that runs containers. No names: nothing is told.
	CDI func(a api.Assignment) (names []string, dir string)
	// Hints, when set, returns variables an assignment's task is given
	// unless the agent or the job's env sets them (hints.go): the NCCL
	// hints an operator enabled. Nil: none.
	Hints func(a api.Assignment) map[string]string
	// Reports takes each attempt's finish or failure (report.go); nil
	// sends them to Coordinator at once, keeping nothing.
	Reports Reports
}

// Runner runs tasks. It is safe for concurrent use.
type Runner struct {
	cfg Config

	mu      sync.Mutex
	running map[string]*run // by attempt id
}

// run is one attempt on this agent, from the moment it is handed to Run
// until its process is gone and its user and directory are released.
type run struct {
	a      api.Assignment
	cancel chan struct{}
	once   sync.Once
	// superseded is set when a newer assignment took this attempt's task
	// or one of its GPUs: the coordinator has moved on, so the attempt is
	// stale and reports nothing more.
	superseded atomic.Bool
	// cause, when set, is why the agent stopped the attempt: a GPU it
	// holds failed, or it used more than its share of one. The attempt
	// then reports fail with it, not its exit code.
	cause atomic.Pointer[stopCause]
	// preempted is set when the coordinator preempted the attempt: it is
	// stopped with its job's preemption grace (Preempt).
	preempted atomic.Bool
	// user is the user the attempt runs as, once it has one.
	user atomic.Pointer[User]
	done chan struct{} // closed when the attempt is over and cleaned up
}

func (rn *run) stop() { rn.once.Do(func() { close(rn.cancel) }) }

// stoppedBeforeStart is the end and reason of an attempt stopped before
// its process started.
func (rn *run) stoppedBeforeStart() (End, string) {
	if c := rn.cause.Load(); c != nil {
		return c.end, c.reason + " (before the task started)"
	}
	return EndCancelled, "cancelled before it started"
}

// New returns a runner.
func New(cfg Config) *Runner {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Reports == nil {
		cfg.Reports = direct{cfg.Coordinator}
	}
	if cfg.StopGrace == 0 {
		cfg.StopGrace = 10 * time.Second
	}
	if cfg.Users == nil {
		cfg.Users = SharedUser{}
	}
	return &Runner{cfg: cfg, running: map[string]*run{}}
}

// Attempt names one attempt being run.
type Attempt struct {
	TaskID, AttemptID string
}

// Holder is the task an attempt holding a GPU belongs to.
type Holder struct{ JobID, TaskID string }

// Holders maps each GPU that a running attempt holds whole to its task.
// A GPU that tasks share is no one task's: it is not in the map (Shares
// lists its tasks).
func (r *Runner) Holders() map[string]Holder {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]Holder{}
	for _, rn := range r.running {
		if rn.a.Resources.Shared() {
			continue
		}
		for _, d := range rn.a.Devices {
			// While an attempt supersedes another on the same GPU, both
			// are here: the first by task id names it, whatever the
			// map's order.
			if h, ok := out[d]; !ok || rn.a.ID < h.TaskID {
				out[d] = Holder{JobID: rn.a.JobID, TaskID: rn.a.ID}
			}
		}
	}
	return out
}

// Running lists the attempts being run (including one waiting for an
// older attempt it superseded to be gone), ordered by task then attempt.
func (r *Runner) Running() []Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Attempt, 0, len(r.running))
	for _, rn := range r.running {
		out = append(out, Attempt{TaskID: rn.a.ID, AttemptID: rn.a.AttemptID})
	}
	slices.SortFunc(out, func(a, b Attempt) int {
		return cmp.Or(cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.AttemptID, b.AttemptID))
	})
	return out
}

// Cancel asks an attempt to stop (cancellation, lost lease, revocation).
// It reports whether the attempt was being run.
func (r *Runner) Cancel(attemptID string) bool {
	r.mu.Lock()
	rn, ok := r.running[attemptID]
	r.mu.Unlock()
	if ok {
		rn.stop()
	}
	return ok
}

// Preempt stops an attempt the coordinator preempted: as Cancel, but
// the executor gives the task the assignment's PreemptionGraceSeconds
// between the polite stop (SIGTERM) and the kill, not the agent's
// StopGrace.
func (r *Runner) Preempt(attemptID string) bool {
	r.mu.Lock()
	rn, ok := r.running[attemptID]
	r.mu.Unlock()
	if ok {
		rn.preempted.Store(true)
		rn.stop()
	}
	return ok
}

// FailGPU stops every attempt that holds the GPU uuid, which failed: each
// reports fail with reason (so the coordinator retries its task, on sound
// GPUs) instead of an exit code. It returns the attempts it stopped.
func (r *Runner) FailGPU(uuid, reason string) []string {
	stopped, _ := r.failOn(uuid, reason, true, func(api.Assignment) bool { return false })
	return stopped
}

// FailApp answers an application fault on device uuid (an XID the
// driver blames on one process's work, not on the GPU): it stops the
// attempt holding the device whole, as FailGPU does. Attempts that hold a
// share of it are spared, and returned as such: the event does not say
// which process faulted, and CUDA reports the fault to the contexts it
// hit, so a task that was hit fails by itself while the others go on.
func (r *Runner) FailApp(uuid, reason string) (stopped, spared []string) {
	return r.failOn(uuid, reason, false, func(a api.Assignment) bool { return a.Resources.Shared() })
}

// failOn stops, with reason, the attempts holding device uuid that spare
// does not pick; it returns those stopped and those spared, each sorted.
// When the GPU itself failed (gpuFault), their reports name it: the
// attempts are lost, not failed; an application's fault is the task's.
func (r *Runner) failOn(uuid, reason string, gpuFault bool, spare func(api.Assignment) bool) (stopped, spared []string) {
	r.mu.Lock()
	var hit []*run
	for _, rn := range r.running {
		if !slices.Contains(rn.a.Devices, uuid) {
			continue
		}
		if spare(rn.a) {
			spared = append(spared, rn.a.AttemptID)
		} else {
			hit = append(hit, rn)
		}
	}
	r.mu.Unlock()
	for _, rn := range hit {
		cause := &stopCause{end: EndGPUFault, reason: reason}
		if gpuFault {
			cause.gpu = uuid
		}
		rn.cause.CompareAndSwap(nil, cause)
		rn.stop()
		stopped = append(stopped, rn.a.AttemptID)
	}
	slices.Sort(stopped)
	slices.Sort(spared)
	return stopped, spared
}

// Outcome is how a run ended, for logs and tests.
type Outcome struct {
	ExitCode int
	// Failed is set when the attempt was reported with fail (it never ran
	// to an exit code), with Reason.
	Failed bool
	Reason string
	// End is how it ended, in a word.
	End End
}

// Run carries an assignment to its end. It returns when the coordinator
// has been told the outcome (or the attempt turned out to be stale), and
// the attempt's processes, user and directory are gone.
//
// An assignment supersedes every attempt this runner still has of the
// same task, or holding one of its GPUs (whole: shares of one GPU run side
// by side, share.go): the coordinator handed them on,
// so those attempts are stale. They are stopped, and this one starts only
// once they are gone, so that one task never runs twice at once here and
// a GPU is never in two attempts' hands.
//
// An attempt this runner runs already is not run again: an acquire hands
// out a gang member placed on this worker until it starts (Duplicate).
func (r *Runner) Run(ctx context.Context, a api.Assignment) Outcome {
	rn := &run{a: a, cancel: make(chan struct{}), done: make(chan struct{})}
	r.mu.Lock()
	if _, dup := r.running[a.AttemptID]; dup {
		r.mu.Unlock()
		return Outcome{ExitCode: -1, End: EndDuplicate, Reason: "attempt already running here"}
	}
	older := r.supersededBy(a)
	r.running[a.AttemptID] = rn
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, a.AttemptID)
		r.mu.Unlock()
		close(rn.done)
	}()
	log := r.cfg.Logger.With("task_id", a.ID, "attempt_id", a.AttemptID, "executor", a.Executor)
	switch err := r.awaitSuperseded(ctx, rn, older, log); {
	case err == nil:
	case rn.superseded.Load():
		return staleOutcome(-1)
	case errors.Is(err, errStoppedWaiting):
		end, why := rn.stoppedBeforeStart()
		return r.fail(ctx, a, end, why)
	default:
		return r.fail(context.WithoutCancel(ctx), a, EndShutdown, "agent shut down before the task started")
	}
	out := r.execute(ctx, rn, log)
	log.Info("task ended", "exit_code", out.ExitCode, "failed", out.Failed, "reason", out.Reason)
	return out
}

func (r *Runner) fail(ctx context.Context, a api.Assignment, end End, reason string) Outcome {
	return r.report(ctx, a, end, api.FailRequest{AttemptID: a.AttemptID, Reason: reason})
}

// failForGood reports a failure no retry can fix: the task fails now.
func (r *Runner) failForGood(ctx context.Context, a api.Assignment, reason string) Outcome {
	return r.report(ctx, a, EndError, api.FailRequest{AttemptID: a.AttemptID, Reason: reason, Permanent: true})
}

// report tells the coordinator the attempt failed without an exit code.
func (r *Runner) report(ctx context.Context, a api.Assignment, end End, req api.FailRequest) Outcome {
	reason := req.Reason
	if err := r.cfg.Reports.Report(ctx, Report{TaskID: a.ID, Fail: &req}); err != nil {
		r.cfg.Logger.Warn("reporting failure", "task_id", a.ID, "error", err)
	}
	return Outcome{ExitCode: -1, Failed: true, Reason: reason, End: end}
}

func (r *Runner) execute(ctx context.Context, rn *run, log *slog.Logger) Outcome {
	a := rn.a
	ex, err := r.cfg.Host.Get(ctx, a.Executor)
	if err != nil {
		return r.fail(ctx, a, EndError, fmt.Sprintf("executor %q unavailable: %v", a.Executor, err))
	}
	// An enforced share that cannot be held fails before its start is
	// reported: the task never shows as running here.
	mps, err := r.mpsFor(a)
	if err != nil {
		return r.fail(ctx, a, EndError, err.Error())
	}
	// The preflight runs before the start is reported, so that a passed
	// one goes with the start and a failed one ends the attempt before it
	// ever shows as running (preflight.go).
	ship := newShipper(r.cfg.Coordinator, a)
	var pre *api.PreflightReport
	if a.Preflight {
		var out Outcome
		var failed bool
		if pre, out, failed = r.preflight(ctx, a, ship, log); failed {
			return out
		}
	}
	if err := r.start(ctx, a, pre); err != nil {
		end := EndStale
		if ctx.Err() != nil {
			end = EndShutdown
		}
		return Outcome{ExitCode: -1, Failed: true, Reason: "start refused: " + err.Error(), End: end}
	}
	user, err := r.cfg.Users.Acquire()
	if err != nil {
		return r.fail(ctx, a, EndError, "task user: "+err.Error())
	}
	rn.user.Store(&user)
	workDir, err := makeTaskDir(r.cfg.WorkRoot, a.AttemptID, user)
	defer r.cleanUp(log, user, workDir)
	if err != nil {
		return r.fail(ctx, a, EndError, "task directory: "+err.Error())
	}

	if err := r.stageInputs(ctx, a, workDir, user); err != nil {
		if ctx.Err() != nil {
			return r.fail(context.WithoutCancel(ctx), a, EndShutdown, "agent shut down while staging the task's inputs")
		}
		return r.fail(ctx, a, EndError, "staging inputs: "+err.Error())
	}
	if err := r.stageCheckpoint(ctx, a, workDir, user); err != nil { // checkpoint.go
		if ctx.Err() != nil {
			return r.fail(context.WithoutCancel(ctx), a, EndShutdown, "agent shut down while staging the task's checkpoint")
		}
		return r.fail(ctx, a, EndError, "staging the checkpoint: "+err.Error())
	}
	env := taskEnv(a, workDir, user)
	if dir, ok := checkpointEnv(a, workDir); ok {
		env[api.CheckpointEnv] = dir
	}
	maps.Copy(env, shareEnv(a.Resources, mps))
	if r.cfg.Hints != nil {
		addHints(env, r.cfg.Hints(a), a) // hints.go
	}
	env[executor.EnvSandbox] = r.sandbox(mps, a.Resources, a.Devices, a.Gang != nil).Encode()
	if r.cfg.CDI != nil {
		if names, dir := r.cfg.CDI(a); len(names) > 0 {
			env[executor.EnvCDIDevices] = strings.Join(names, ",")
			env[executor.EnvCDIDir] = dir
		}
	}
	if a.Gang != nil {
		peers, err := r.meet(ctx, rn)
		switch {
		case err == nil:
			maps.Copy(env, gangEnv(*a.Gang, peers, len(a.Devices)))
		case rn.superseded.Load() || client.IsCode(err, api.CodeStaleAttempt):
			return staleOutcome(-1)
		case ctx.Err() != nil:
			return r.fail(context.WithoutCancel(ctx), a, EndShutdown, "agent shut down while the gang met")
		case errors.Is(err, errGangStopped):
			end, why := rn.stoppedBeforeStart()
			return r.fail(ctx, a, end, why)
		default:
			return r.fail(ctx, a, EndError, "rendezvous: "+err.Error())
		}
		log.Info("gang met", "rank", a.Gang.Rank, "size", a.Gang.Size, "master", env["MASTER_ADDR"]+":"+env["MASTER_PORT"])
	}
	if r.cfg.Leases != nil {
		// The coordinator counts an attempt lost once its lease lapses and
		// hands the task to another worker: a process started after that
		// (this agent was paused or cut off since the assignment) would
		// run next to the task's next attempt.
		if err := r.cfg.Leases.Hold(ctx, a.AttemptID, rn.cancel); err != nil {
			switch {
			case rn.superseded.Load():
				return staleOutcome(-1)
			case ctx.Err() != nil:
				return r.fail(context.WithoutCancel(ctx), a, EndShutdown, "agent shut down before the task started")
			default:
				end, why := rn.stoppedBeforeStart()
				return r.fail(ctx, a, end, why)
			}
		}
	}
	task := executor.Task{
		ID:      a.AttemptID,
		TaskID:  a.ID,
		JobID:   a.JobID,
		Config:  a.Config,
		Env:     env,
		Devices: a.Devices,
		WorkDir: workDir,
	}
	if err := ex.Start(ctx, task); err != nil {
		why := fmt.Sprintf("executor %q could not start the task: %v", a.Executor, err)
		if executor.IsPermanent(err) {
			return r.failForGood(ctx, a, why)
		}
		return r.fail(ctx, a, EndError, why)
	}

	logsDone := make(chan error, 1)
	logCtx, stopLogs := context.WithCancel(ctx)
	defer stopLogs()
	go func() { logsDone <- ex.Logs(logCtx, task.ID, ship.send) }()

	waitDone := make(chan waitResult, 1)
	go func() {
		res, err := ex.Wait(ctx, task.ID)
		waitDone <- waitResult{res, err}
	}()

	var timeout <-chan time.Time
	if a.TimeoutSeconds > 0 {
		timeout = r.cfg.Clock.After(time.Duration(a.TimeoutSeconds) * time.Second)
	}
	var note, why string // why: what the finish reports beyond the exit code
	var wr waitResult
	stopping := false
	for done := false; !done; {
		select {
		case wr = <-waitDone:
			done = true
		case <-timeout:
			timeout = nil
			why = fmt.Sprintf("timed out after %ds", a.TimeoutSeconds)
			note = why + "; stopping"
			stopping = r.stop(ctx, ex, task.ID, log, note, stopping)
		case <-rn.cancel:
			rn.cancel = nil
			note = "cancelled; stopping"
			grace := r.cfg.StopGrace
			switch c := rn.cause.Load(); {
			case rn.superseded.Load():
				note = "superseded by a newer assignment (lease lost); stopping"
			case c != nil:
				note = c.reason + "; stopping"
			case rn.preempted.Load():
				note = "preempted; stopping"
				grace = time.Duration(a.PreemptionGraceSeconds) * time.Second
			}
			stopping = r.stopWithin(ctx, ex, task.ID, log, note, stopping, grace)
		case <-ship.stale:
			note = "attempt is no longer current (lease lost); stopping"
			stopping = r.stop(ctx, ex, task.ID, log, note, stopping)
		case <-ctx.Done():
			// The agent is going away: stop the task and hand it back so
			// it is retried elsewhere without waiting for the lease.
			bg := context.WithoutCancel(ctx)
			r.stop(bg, ex, task.ID, log, "agent shutting down", stopping)
			res, err := ex.Wait(bg, task.ID)
			stopLogs()
			<-logsDone
			log.Info("task handed back at shutdown", "exit_code", res.ExitCode, "wait_error", err)
			return r.fail(bg, a, EndShutdown, "agent shut down while the task ran")
		}
	}
	if wr.err != nil {
		stopLogs()
		<-logsDone
		// The executor is gone (its plugin crashed): the task's main process
		// died with it, but what it started may run on. The coordinator
		// hands the task out again as soon as it hears of the failure, so
		// that is killed first.
		r.killRemains(log, user, a.AttemptID)
		if ship.isStale() || rn.superseded.Load() {
			return staleOutcome(-1)
		}
		return r.fail(context.WithoutCancel(ctx), a, EndError, fmt.Sprintf("executor %q: %v", a.Executor, wr.err))
	}
	// Every line the task wrote is shipped before the finish.
	if err := <-logsDone; err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("log stream ended with an error", "error", err)
	}
	if rn.superseded.Load() {
		return staleOutcome(wr.res.ExitCode)
	}
	if note != "" {
		ship.note(note)
	}
	if c := rn.cause.Load(); c != nil && !ship.isStale() {
		// Its GPU failed under it, or it outgrew its share: whatever its
		// exit code says, the attempt did not run to its own end. A GPU's
		// fault is named, so that the attempt is lost, not failed, and
		// the task placed again at once on another GPU.
		return r.report(context.WithoutCancel(ctx), a, c.end, api.FailRequest{AttemptID: a.AttemptID, Reason: c.reason, GPUFault: c.gpu,
			Checkpoint: r.uploadCheckpoint(context.WithoutCancel(ctx), a, workDir, log)})
	}
	if ship.isStale() {
		return staleOutcome(wr.res.ExitCode)
	}
	var checkpoint *api.CheckpointRef
	if wr.res.ExitCode != 0 { // preempted or failed: its state is kept for the next attempt
		checkpoint = r.uploadCheckpoint(context.WithoutCancel(ctx), a, workDir, log)
	}
	arts, problem := r.uploadOutputs(context.WithoutCancel(ctx), a, workDir, log)
	if problem != "" {
		why = strings.TrimPrefix(why+"; "+problem, "; ")
		if len(why) > api.MaxReasonBytes {
			why = why[:api.MaxReasonBytes-3] + "..."
		}
	}
	req := api.FinishRequest{AttemptID: a.AttemptID, SubmissionID: a.AttemptID + "-finish", ExitCode: wr.res.ExitCode, Reason: why, Artifacts: arts, Checkpoint: checkpoint}
	if len(wr.res.Output) > 0 {
		req.Output = wr.res.Output
	}
	if err := r.cfg.Reports.Report(context.WithoutCancel(ctx), Report{TaskID: a.ID, Finish: &req, LastLogSeq: ship.lastSeq()}); err != nil {
		log.Warn("reporting finish", "error", err)
	}
	return Outcome{ExitCode: wr.res.ExitCode, Reason: strings.TrimSpace(note + " " + wr.res.Reason), End: exitEnd(wr.res.ExitCode, why != "", note != "")}
}

type waitResult struct {
	res executor.Result
	err error
}

// stop asks the executor to stop the task once; the grace period and the
// kill are the executor's job. It runs in the background so the caller
// keeps watching for the task's end.
func (r *Runner) stop(ctx context.Context, ex executor.Executor, id string, log *slog.Logger, why string, already bool) bool {
	return r.stopWithin(ctx, ex, id, log, why, already, r.cfg.StopGrace)
}

// stopWithin is stop with the grace given.
func (r *Runner) stopWithin(ctx context.Context, ex executor.Executor, id string, log *slog.Logger, why string, already bool, grace time.Duration) bool {
	if already {
		return true
	}
	log.Info("stopping task", "why", why, "grace", grace)
	go func() {
		if err := ex.Stop(ctx, id, grace); err != nil {
			log.Warn("stop", "error", err)
		}
	}()
	return true
}

// killRemains kills every process left of an attempt whose executor
// failed: those carrying its id, and under an exclusive task uid every
// process of that uid.
func (r *Runner) killRemains(log *slog.Logger, u User, attemptID string) {
	if err := killAttempt(attemptID); err != nil {
		log.Error("processes of the attempt could not all be killed", "error", err)
	}
	if u.Switch && u.Exclusive {
		if err := killLeftovers(u.UID); err != nil {
			log.Error("processes of the task uid could not all be killed", "uid", u.UID, "error", err)
		}
	}
}

// cleanUp runs once a task has ended: every process left under an
// exclusive task uid is killed, the task's directory removed, and only
// then the user handed back for another task.
func (r *Runner) cleanUp(log *slog.Logger, u User, dir string) {
	clean := true
	if u.Switch && u.Exclusive {
		if err := killLeftovers(u.UID); err != nil {
			// Handed back not clean: the pool looks again before it
			// gives the uid to another task, and skips it while
			// anything runs under it.
			log.Error("processes of the task uid could not all be killed (or listed); the uid is checked again before its next task", "uid", u.UID, "error", err)
			clean = false
		}
	}
	if dir != "" {
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("removing the task directory", "dir", dir, "error", err)
		}
	}
	r.cfg.Users.Release(u, clean)
}
