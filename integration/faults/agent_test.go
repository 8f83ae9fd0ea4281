package faults

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// simExecutor is the executor name the simulated workers advertise and the
// campaign's jobs ask for; no real agent runs them.
const simExecutor = "sim"

// Timings of the simulated worker. The coordinators tell workers to
// heartbeat every 100 ms (the cluster's HeartbeatInterval); a call gives
// up after callTimeout. A report (finish or fail) has no deadline: it is
// kept, as the real agent keeps it in its spool on disk, and sent again
// until a coordinator answers it, after retryPause doubling up to
// reportRetryMax.
const (
	heartbeatEvery = 100 * time.Millisecond
	callTimeout    = 4 * time.Second
	acquireWait    = 1 // seconds of long poll
	retryPause     = 50 * time.Millisecond
	reportRetryMax = 800 * time.Millisecond
)

// simAgent is a worker made of sdk/client calls, as the real agent makes
// them: one acquire at a time under a request id kept until the call is
// answered, one goroutine per task held (start, log chunks), a report of
// each attempt's end (finish under a submission id, or fail) kept before
// it is sent and sent again until a coordinator acknowledges it or
// refuses it for good (the real agent's spool, agent/reports.go), and a
// heartbeat loop that names the tasks held and those whose reports wait,
// and stops those the coordinator names in cancel_task_ids. It asks for
// no new task while a report waits that has not been tried since it was
// kept. Every task call is recorded in the history, and what the worker
// did besides (a run's end, a report kept or settled, a freeze, a
// restart) in the recorder's events.
//
// A restart (restart) is the agent process killed and started again:
// everything in memory is forgotten (the attempts it ran, an acquire's
// request id) but its credential and its kept reports, which a real agent
// keeps on disk.
type simAgent struct {
	id      string
	client  int // the history's client id
	cl      *client.Client
	rec     *recorder
	devices []api.Device
	parent  context.Context

	mu      sync.Mutex
	life    *life
	gate    chan struct{} // non-nil while paused; closed on resume
	running map[string]*held
	crashed bool
	stopped bool
	// spool holds the kept reports, oldest first; it outlives restarts.
	spool []*report
	// verdicts: how each attempt's report was settled ("accepted" or the
	// refusal's code), for the faults that check it.
	verdicts map[string]string
	wake     chan struct{} // a report was kept
}

// life is one run of the agent's process: its loops stop with ctx.
type life struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// report is an attempt's end, kept until a coordinator settles it.
type report struct {
	task, attempt string
	fail          bool // a fail, else a finish
	exit          int
	resend        bool // the behaviour's Resend: the finish is sent once more after its answer
	// logs is closed once the attempt's log chunks are sent or given up
	// (the report goes after them); nil after a restart, which lost them.
	logs chan struct{}
	// tried: sent since it was kept (or since the agent restarted) and
	// answered with an error that a coordinator may take back later
	// (internal); until then the agent asks for no new task.
	tried bool
}

// held is an attempt the agent works on.
type held struct {
	a api.Assignment
	// running: started and not yet finishing (guarded by the agent's mu).
	running  bool
	stop     chan struct{} // closed when the coordinator asks to stop it
	stopOnce sync.Once
}

func (h *held) cancel() { h.stopOnce.Do(func() { close(h.stop) }) }

// newAgent registers a worker with the join token and starts its loops.
func newAgent(ctx context.Context, urls []string, hc *http.Client, joinToken, id string, clientID int, rec *recorder) (*simAgent, error) {
	join, err := client.New(client.Config{Addrs: urls, Token: joinToken, MaxRetryWait: 10 * time.Second, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	devices := []api.Device{
		{Index: 0, UUID: "GPU-" + id + "-0", Name: "sim", MemoryMiB: 16384, Healthy: true},
		{Index: 1, UUID: "GPU-" + id + "-1", Name: "sim", MemoryMiB: 16384, Healthy: true},
	}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	resp, err := join.Register(rctx, api.RegisterRequest{WorkerID: id, Capabilities: []string{"*"}, Executors: []string{simExecutor}, Devices: devices})
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", id, err)
	}
	if resp.WorkerToken == "" {
		return nil, fmt.Errorf("register %s: no worker credential in the answer", id)
	}
	cl, err := client.New(client.Config{Addrs: urls, Token: resp.WorkerToken, MaxRetryWait: 3 * time.Second, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	a := &simAgent{id: id, client: clientID, cl: cl, rec: rec, devices: devices, parent: context.WithoutCancel(ctx),
		running: map[string]*held{}, verdicts: map[string]string{}, wake: make(chan struct{}, 1)}
	a.mu.Lock()
	a.begin()
	a.mu.Unlock()
	return a, nil
}

// begin starts a life: the heartbeat, acquire and report loops. The
// caller holds a.mu.
func (a *simAgent) begin() {
	l := &life{}
	l.ctx, l.cancel = context.WithCancel(a.parent)
	a.life = l
	l.wg.Add(3)
	go func() { defer l.wg.Done(); a.heartbeatLoop(l) }()
	go func() { defer l.wg.Done(); a.acquireLoop(l) }()
	go func() { defer l.wg.Done(); a.reportLoop(l) }()
}

// restart kills the agent's process and starts it again: it forgets what
// it held in memory (its attempts, an acquire's request id, a freeze: a
// new process is not frozen) and keeps its credential and its kept
// reports, each to be tried again before any new work. It reports false
// for an agent crashed for good or stopped.
func (a *simAgent) restart() bool {
	a.mu.Lock()
	if a.crashed || a.stopped {
		a.mu.Unlock()
		return false
	}
	old := a.life
	a.mu.Unlock()
	old.cancel()
	old.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.crashed || a.stopped {
		return false
	}
	a.running = map[string]*held{}
	if a.gate != nil {
		close(a.gate)
		a.gate = nil
		a.rec.note(event{kind: evResume, worker: a.id})
	}
	for _, rep := range a.spool {
		rep.tried, rep.logs = false, nil
	}
	a.rec.note(event{kind: evRestart, worker: a.id})
	a.begin()
	return true
}

// pause stops the agent's heartbeats and its calls (the ones in flight
// complete) until resume.
func (a *simAgent) pause() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate == nil {
		a.gate = make(chan struct{})
		a.rec.note(event{kind: evPause, worker: a.id})
	}
}

func (a *simAgent) resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate != nil {
		close(a.gate)
		a.gate = nil
		a.rec.note(event{kind: evResume, worker: a.id})
	}
}

func (a *simAgent) paused() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gate != nil
}

// midway reports whether the agent has started an attempt that it has
// not begun to finish.
func (a *simAgent) midway() bool { return len(a.midwayAttempts()) > 0 }

// midwayAttempts lists those attempts: attempt id -> task id.
func (a *simAgent) midwayAttempts() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]string{}
	for att, h := range a.running {
		if h.running {
			out[att] = h.a.ID
		}
	}
	return out
}

// holds reports whether the agent still works on an attempt or keeps its
// report unsettled.
func (a *simAgent) holds(att string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.running[att]; ok {
		return true
	}
	for _, rep := range a.spool {
		if rep.attempt == att {
			return true
		}
	}
	return false
}

// kept reports whether the agent keeps the report of att unsettled.
func (a *simAgent) kept(att string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, rep := range a.spool {
		if rep.attempt == att {
			return true
		}
	}
	return false
}

// verdict is how the report of att was settled; "" while it is not.
func (a *simAgent) verdict(att string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.verdicts[att]
}

func (a *simAgent) setRunning(h *held, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h.running = on
}

// wait blocks while the agent is paused; it reports whether the life l
// goes on.
func (a *simAgent) wait(l *life) bool {
	a.mu.Lock()
	g := a.gate
	a.mu.Unlock()
	if g != nil {
		select {
		case <-g:
		case <-l.ctx.Done():
		}
	}
	return l.ctx.Err() == nil
}

// kill crashes the agent for good: every loop stops where it is, nothing
// it holds is finished or reported (its kept reports stay on a disk that
// nobody reads again), and the calls in flight end with unknown outcomes.
func (a *simAgent) kill() {
	a.mu.Lock()
	a.crashed = true
	l := a.life
	a.rec.note(event{kind: evCrash, worker: a.id})
	a.mu.Unlock()
	l.cancel()
}

func (a *simAgent) wasKilled() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.crashed
}

// stop ends the agent at the end of a schedule and waits for its loops.
func (a *simAgent) stop() {
	a.mu.Lock()
	a.stopped = true
	l := a.life
	a.mu.Unlock()
	l.cancel()
	a.resume()
	l.wg.Wait()
}

// pace waits d unless the life ends first.
func (l *life) pace(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-l.ctx.Done():
		return false
	}
}

func (a *simAgent) heartbeatLoop(l *life) {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		if a.paused() {
			continue
		}
		a.mu.Lock()
		var sent []*held
		var ids []string
		for _, h := range a.running {
			sent = append(sent, h)
			if !slices.Contains(ids, h.a.ID) {
				ids = append(ids, h.a.ID)
			}
		}
		// The tasks whose reports wait: their leases must hold until
		// the report lands.
		for _, rep := range a.spool {
			if !slices.Contains(ids, rep.task) {
				ids = append(ids, rep.task)
			}
		}
		a.mu.Unlock()
		slices.Sort(ids)
		ctx, cancel := context.WithTimeout(l.ctx, time.Second)
		resp, err := a.cl.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: ids})
		cancel()
		if err != nil {
			continue
		}
		// The answer speaks of the attempts held when it was sent.
		for _, h := range sent {
			if slices.Contains(resp.CancelTaskIDs, h.a.ID) {
				h.cancel()
			}
		}
	}
}

// reportsTried reports whether every kept report has been tried since it
// was kept (or since the agent restarted): until then the agent asks for
// no new task, so that after an outage the coordinators hear what was
// done before they hand out more.
func (a *simAgent) reportsTried() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, rep := range a.spool {
		if !rep.tried {
			return false
		}
	}
	return true
}

func (a *simAgent) acquireLoop(l *life) {
	slots := make(chan struct{}, len(a.devices))
	requestID := ""
	var rec *record
	for {
		select {
		case slots <- struct{}{}:
		case <-l.ctx.Done():
			return
		}
		if !a.wait(l) {
			return
		}
		for !a.reportsTried() {
			if !l.pace(10 * time.Millisecond) {
				return
			}
		}
		if requestID == "" {
			requestID = rand.Text()
			rec = a.rec.begin(a.client, opInput{Kind: opAcquire, Worker: a.id, Request: requestID})
		}
		ctx, cancel := context.WithTimeout(withRecord(l.ctx, rec), callTimeout+acquireWait*time.Second)
		resp, err := a.cl.Acquire(ctx, api.AcquireRequest{WaitSeconds: acquireWait, RequestID: requestID})
		cancel()
		if err != nil {
			// The request id is kept: the next call asks again under it.
			if _, unexpected := outcome(err); unexpected != "" {
				a.rec.update(rec, func(r *record) { r.err = unexpected })
			}
			<-slots
			if !l.pace(retryPause) {
				return
			}
			continue
		}
		requestID = ""
		if resp.Task == nil {
			a.rec.update(rec, func(r *record) { r.drop = true })
			a.rec.end(rec, opOutput{})
			<-slots
			continue
		}
		task := *resp.Task
		a.rec.update(rec, func(r *record) { r.in.Task, r.in.Attempt = task.ID, task.AttemptID })
		a.rec.end(rec, opOutput{Number: task.Attempt, Devices: slices.Clone(task.Devices)})
		h := &held{a: task, stop: make(chan struct{})}
		a.mu.Lock()
		a.running[task.AttemptID] = h
		a.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() { <-slots }()
			a.run(l, h)
			a.mu.Lock()
			delete(a.running, task.AttemptID)
			a.mu.Unlock()
		}()
	}
}

// call makes one recorded task call and returns how it ended, and its
// error.
func (a *simAgent) call(l *life, in opInput, f func(ctx context.Context) (*obsTask, error)) (opOutput, error) {
	in.Worker = a.id
	rec := a.rec.begin(a.client, in)
	ctx, cancel := context.WithTimeout(withRecord(l.ctx, rec), callTimeout)
	view, err := f(ctx)
	cancel()
	out, unexpected := outcome(err)
	if err == nil {
		out.View = view
	}
	a.rec.update(rec, func(r *record) { r.err = unexpected })
	a.rec.end(rec, out)
	return out, err
}

// untilKnown repeats a call while its outcome is unknown, for at most
// patience; it returns the last outcome.
func (a *simAgent) untilKnown(l *life, patience time.Duration, in opInput, f func(ctx context.Context) (*obsTask, error)) opOutput {
	deadline := time.Now().Add(patience)
	for {
		if !a.wait(l) {
			return opOutput{Unknown: true}
		}
		out, _ := a.call(l, in, f)
		if !out.Unknown || time.Now().After(deadline) || !l.pace(retryPause) {
			return out
		}
	}
}

func taskView(t api.Task, err error) (*obsTask, error) {
	if err != nil {
		return nil, err
	}
	return observe(jobStateOf(t.State), t), nil
}

// run works on one attempt as its behaviour says, and keeps its report.
func (a *simAgent) run(l *life, h *held) {
	var do behaviour
	_ = json.Unmarshal(h.a.Config, &do)
	id, att := h.a.ID, h.a.AttemptID
	base := opInput{Task: id, Attempt: att}

	in := base
	in.Kind = opStart
	if out := a.untilKnown(l, 10*time.Second, in, func(ctx context.Context) (*obsTask, error) {
		return nil, a.cl.Start(ctx, id, att)
	}); out.Code != "" || out.Unknown {
		return
	}
	if do.FailFirst && h.a.Attempt == 1 {
		a.keep(l, &report{task: id, attempt: att, fail: true})
		return
	}
	a.setRunning(h, true)
	// The log chunks go out while the task runs; its report goes after
	// them.
	logs := make(chan struct{})
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer close(logs)
		for seq := int64(1); seq <= int64(do.Logs); seq++ {
			in := base
			in.Kind, in.Seq = opLogs, seq
			a.untilKnown(l, 2*time.Second, in, func(ctx context.Context) (*obsTask, error) {
				return nil, a.cl.AppendLogs(ctx, id, api.LogsRequest{AttemptID: att, Stream: api.StreamStdout, Seq: seq, Data: fmt.Sprintf("chunk %d of %s\n", seq, att)})
			})
		}
	}()
	exit := do.Exit
	select {
	case <-time.After(time.Duration(do.RunMS) * time.Millisecond):
	case <-h.stop:
		exit = 143 // stopped as asked: SIGTERM
	case <-l.ctx.Done():
		return
	}
	// The task's process has ended; a frozen agent writes its report only
	// once thawed, and a restart meanwhile loses it.
	a.rec.note(event{kind: evRunEnd, worker: a.id, task: id, attempt: att, exit: exit})
	if !a.wait(l) {
		return
	}
	a.setRunning(h, false)
	a.keep(l, &report{task: id, attempt: att, exit: exit, resend: do.Resend, logs: logs})
}

// keep puts a report in the spool, unless the life it belongs to has
// ended (the process died before writing it).
func (a *simAgent) keep(l *life, rep *report) {
	a.mu.Lock()
	if l.ctx.Err() != nil || a.life != l {
		a.mu.Unlock()
		return
	}
	a.spool = append(a.spool, rep)
	a.rec.note(event{kind: evKept, worker: a.id, task: rep.task, attempt: rep.attempt, exit: rep.exit, fail: rep.fail})
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// settle removes a report from the spool once a coordinator has answered
// it for good.
func (a *simAgent) settle(rep *report, verdict string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.spool = slices.DeleteFunc(a.spool, func(r *report) bool { return r == rep })
	a.verdicts[rep.attempt] = verdict
	a.rec.note(event{kind: evSettled, worker: a.id, task: rep.task, attempt: rep.attempt, exit: rep.exit, fail: rep.fail, verdict: verdict})
}

// reportLoop delivers the kept reports, oldest first, until the life
// ends, as the real agent's report queue does: a report acknowledged
// (2xx; a finish carries its submission id, so a repeat gets the first
// answer) or refused for good (a refusal of the contract, stale_attempt
// or not_claimed say) is removed; one that no coordinator took (no
// leader, unreachable, an outcome unknown) stays, and the reports behind
// it wait; one a coordinator failed under (internal) stays, marked tried,
// and those behind it go ahead.
func (a *simAgent) reportLoop(l *life) {
	pause := retryPause
	for {
		var wait <-chan time.Time
		if a.reportPass(l) {
			pause = retryPause
		} else {
			wait = time.After(pause)
			pause = min(2*pause, reportRetryMax)
		}
		select {
		case <-l.ctx.Done():
			return
		case <-a.wake:
		case <-wait:
		}
	}
}

// reportPass tries each kept report once and reports whether none is
// left to try again soon.
func (a *simAgent) reportPass(l *life) bool {
	a.mu.Lock()
	pending := slices.Clone(a.spool)
	a.mu.Unlock()
	settled := true
	for _, rep := range pending {
		if rep.logs != nil {
			select {
			case <-rep.logs:
			case <-l.ctx.Done():
				return false
			}
		}
		if !a.wait(l) {
			return false
		}
		in := opInput{Task: rep.task, Attempt: rep.attempt, Kind: opFail}
		send := func(ctx context.Context) (*obsTask, error) {
			return taskView(a.cl.Fail(client.FailFast(ctx), rep.task, api.FailRequest{AttemptID: rep.attempt, Reason: "simulated: executor missing"}))
		}
		if !rep.fail {
			in.Kind, in.ExitCode, in.Submission = opFinish, rep.exit, rep.attempt+"-finish"
			send = func(ctx context.Context) (*obsTask, error) {
				return taskView(a.cl.Finish(client.FailFast(ctx), rep.task, api.FinishRequest{AttemptID: rep.attempt, SubmissionID: rep.attempt + "-finish", ExitCode: rep.exit}))
			}
		}
		out, err := a.call(l, in, send)
		switch verdict := classifyReport(err); verdict {
		case reportAccepted:
			a.settle(rep, "accepted")
			if rep.resend && a.wait(l) {
				a.call(l, in, send)
			}
		case reportRefused:
			code := string(out.Code)
			var e *api.Error
			if errors.As(err, &e) {
				code = string(e.Code)
			}
			a.settle(rep, code)
		case reportFailed:
			settled = false
			a.mu.Lock()
			rep.tried = true
			a.mu.Unlock()
		case reportUnreachable:
			return false
		}
	}
	return settled
}

// How one delivery of a report went (agent/reports.go's classify).
const (
	reportAccepted    = iota // acknowledged: removed
	reportRefused            // refused for good: removed
	reportFailed             // a coordinator failed under it: kept, tried
	reportUnreachable        // no coordinator took it: kept
)

func classifyReport(err error) int {
	var e *api.Error
	switch {
	case err == nil:
		return reportAccepted
	case client.Unavailable(err):
		return reportUnreachable
	case !errors.As(err, &e):
		return reportUnreachable // the call's deadline, or a transport error
	case e.Code == api.CodeInternal, e.Code == api.CodeUnauthenticated, e.Code == api.CodeWorkerPending:
		return reportFailed
	default:
		return reportRefused
	}
}
