package faults

import (
	"context"
	"crypto/rand"
	"encoding/json"
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
// up after callTimeout, and a finish is resent under its submission id
// until finishPatience has passed.
const (
	heartbeatEvery = 100 * time.Millisecond
	callTimeout    = 4 * time.Second
	acquireWait    = 1 // seconds of long poll
	finishPatience = 25 * time.Second
	retryPause     = 50 * time.Millisecond
)

// simAgent is a worker made of sdk/client calls, as the real agent makes
// them: one acquire at a time under a request id kept until the call is
// answered, one goroutine per task held (start, log chunks, finish under a
// submission id), and a heartbeat loop that reports the tasks held and
// stops those the coordinator names in cancel_task_ids. Every task call is
// recorded in the history.
type simAgent struct {
	id      string
	client  int // the history's client id
	cl      *client.Client
	rec     *recorder
	devices []api.Device

	ctx   context.Context
	crash context.CancelFunc
	wg    sync.WaitGroup

	mu      sync.Mutex
	gate    chan struct{} // non-nil while paused; closed on resume
	running map[string]*held
	crashed bool
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
	a := &simAgent{id: id, client: clientID, cl: cl, rec: rec, devices: devices, running: map[string]*held{}}
	a.ctx, a.crash = context.WithCancel(context.WithoutCancel(ctx))
	a.wg.Add(2)
	go func() { defer a.wg.Done(); a.heartbeatLoop() }()
	go func() { defer a.wg.Done(); a.acquireLoop() }()
	return a, nil
}

// pause stops the agent's heartbeats and its calls (the ones in flight
// complete) until resume.
func (a *simAgent) pause() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate == nil {
		a.gate = make(chan struct{})
	}
}

func (a *simAgent) resume() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate != nil {
		close(a.gate)
		a.gate = nil
	}
}

func (a *simAgent) paused() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gate != nil
}

// midway reports whether the agent has started an attempt that it has
// not begun to finish.
func (a *simAgent) midway() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, h := range a.running {
		if h.running {
			return true
		}
	}
	return false
}

func (a *simAgent) setRunning(h *held, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h.running = on
}

// wait blocks while the agent is paused; it reports whether the agent is
// still alive.
func (a *simAgent) wait() bool {
	a.mu.Lock()
	g := a.gate
	a.mu.Unlock()
	if g != nil {
		select {
		case <-g:
		case <-a.ctx.Done():
		}
	}
	return a.ctx.Err() == nil
}

// kill crashes the agent: every loop stops where it is, nothing it holds
// is finished, and the calls in flight end with unknown outcomes.
func (a *simAgent) kill() {
	a.mu.Lock()
	a.crashed = true
	a.mu.Unlock()
	a.crash()
}

func (a *simAgent) wasKilled() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.crashed
}

// stop ends the agent at the end of a schedule and waits for its loops.
func (a *simAgent) stop() {
	a.crash()
	a.resume()
	a.wg.Wait()
}

// pace waits d unless the agent dies first.
func (a *simAgent) pace(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-a.ctx.Done():
		return false
	}
}

func (a *simAgent) heartbeatLoop() {
	tick := time.NewTicker(heartbeatEvery)
	defer tick.Stop()
	for {
		select {
		case <-a.ctx.Done():
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
		a.mu.Unlock()
		slices.Sort(ids)
		ctx, cancel := context.WithTimeout(a.ctx, time.Second)
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

func (a *simAgent) acquireLoop() {
	slots := make(chan struct{}, len(a.devices))
	requestID := ""
	var rec *record
	for {
		select {
		case slots <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		if !a.wait() {
			return
		}
		if requestID == "" {
			requestID = rand.Text()
			rec = a.rec.begin(a.client, opInput{Kind: opAcquire, Worker: a.id, Request: requestID})
		}
		ctx, cancel := context.WithTimeout(withRecord(a.ctx, rec), callTimeout+acquireWait*time.Second)
		resp, err := a.cl.Acquire(ctx, api.AcquireRequest{WaitSeconds: acquireWait, RequestID: requestID})
		cancel()
		if err != nil {
			// The request id is kept: the next call asks again under it.
			if _, unexpected := outcome(err); unexpected != "" {
				a.rec.update(rec, func(r *record) { r.err = unexpected })
			}
			<-slots
			if !a.pace(retryPause) {
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
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			defer func() { <-slots }()
			a.run(h)
			a.mu.Lock()
			delete(a.running, task.AttemptID)
			a.mu.Unlock()
		}()
	}
}

// call makes one recorded task call and returns how it ended.
func (a *simAgent) call(in opInput, f func(ctx context.Context) (*obsTask, error)) opOutput {
	in.Worker = a.id
	rec := a.rec.begin(a.client, in)
	ctx, cancel := context.WithTimeout(withRecord(a.ctx, rec), callTimeout)
	view, err := f(ctx)
	cancel()
	out, unexpected := outcome(err)
	if err == nil {
		out.View = view
	}
	a.rec.update(rec, func(r *record) { r.err = unexpected })
	a.rec.end(rec, out)
	return out
}

// untilKnown repeats a call while its outcome is unknown, for at most
// patience; it returns the last outcome.
func (a *simAgent) untilKnown(patience time.Duration, in opInput, f func(ctx context.Context) (*obsTask, error)) opOutput {
	deadline := time.Now().Add(patience)
	for {
		if !a.wait() {
			return opOutput{Unknown: true}
		}
		out := a.call(in, f)
		if !out.Unknown || time.Now().After(deadline) || !a.pace(retryPause) {
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

// run works on one attempt as its behaviour says.
func (a *simAgent) run(h *held) {
	var do behaviour
	_ = json.Unmarshal(h.a.Config, &do)
	id, att := h.a.ID, h.a.AttemptID
	base := opInput{Task: id, Attempt: att}

	in := base
	in.Kind = opStart
	if out := a.untilKnown(10*time.Second, in, func(ctx context.Context) (*obsTask, error) {
		return nil, a.cl.Start(ctx, id, att)
	}); out.Code != "" || out.Unknown {
		return
	}
	if do.FailFirst && h.a.Attempt == 1 {
		in := base
		in.Kind = opFail
		a.untilKnown(5*time.Second, in, func(ctx context.Context) (*obsTask, error) {
			return taskView(a.cl.Fail(ctx, id, api.FailRequest{AttemptID: att, Reason: "simulated: executor missing"}))
		})
		return
	}
	a.setRunning(h, true)
	for seq := int64(1); seq <= int64(do.Logs); seq++ {
		in := base
		in.Kind, in.Seq = opLogs, seq
		a.untilKnown(2*time.Second, in, func(ctx context.Context) (*obsTask, error) {
			return nil, a.cl.AppendLogs(ctx, id, api.LogsRequest{AttemptID: att, Stream: api.StreamStdout, Seq: seq, Data: fmt.Sprintf("chunk %d of %s\n", seq, att)})
		})
	}
	exit := do.Exit
	select {
	case <-time.After(time.Duration(do.RunMS) * time.Millisecond):
	case <-h.stop:
		exit = 143 // stopped as asked: SIGTERM
	case <-a.ctx.Done():
		return
	}
	if !a.wait() {
		return
	}
	a.setRunning(h, false)
	in = base
	in.Kind, in.ExitCode, in.Submission = opFinish, exit, att+"-finish"
	finish := func(ctx context.Context) (*obsTask, error) {
		return taskView(a.cl.Finish(ctx, id, api.FinishRequest{AttemptID: att, SubmissionID: att + "-finish", ExitCode: exit}))
	}
	out := a.untilKnown(finishPatience, in, finish)
	if out.Code == "" && !out.Unknown && do.Resend && a.wait() {
		a.call(in, finish)
	}
}
