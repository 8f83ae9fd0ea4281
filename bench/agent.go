package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/bench/stats"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// simAgent is a registered worker that speaks the real protocol through
// sdk/client, as agent.Agent does, but runs nothing: the executor path is
// a no-op, so the figures are the coordinator's.
type simAgent struct {
	id        string
	token     string
	cl        *client.Client
	devices   []api.Device
	executors []string

	mu      sync.Mutex
	running map[string]bool
}

// fakeDevices describes n H100s the way NVML's mock reports them.
func fakeDevices(worker string, n int) []api.Device {
	out := make([]api.Device, n)
	for i := range out {
		out[i] = api.Device{
			Index: i, UUID: fmt.Sprintf("GPU-%s-%08x-0000-0000-0000-%012d", worker[:min(len(worker), 8)], i, i),
			Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, DriverVersion: "550.54.15",
			CUDAVersion: "12.4", ComputeCapability: "9.0", Healthy: true,
		}
	}
	return out
}

// registerAgents registers n workers named prefix0001… with the join token,
// conc at a time. hc, when set, is shared by every agent's client (S3's
// ten thousand workers); otherwise each agent has its own connections,
// whose transport errors go to tlog.
func registerAgents(ctx context.Context, urls []string, joinToken, prefix string, n int, executors []string, hc *http.Client, conc int, tlog *transportLog) ([]*simAgent, error) {
	reg, err := client.New(client.Config{Addrs: urls, Token: joinToken, HTTPClient: hc, MaxRetryWait: 20 * time.Second})
	if err != nil {
		return nil, err
	}
	agents := make([]*simAgent, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id := fmt.Sprintf("%s%05d", prefix, i+1)
			a := &simAgent{id: id, devices: fakeDevices(id, 8), executors: executors, running: map[string]bool{}}
			resp, err := reg.Register(ctx, api.RegisterRequest{WorkerID: id, Capabilities: []string{"*"}, Executors: executors, Devices: a.devices})
			if err != nil {
				errs <- fmt.Errorf("register %s: %w", id, err)
				return
			}
			if resp.WorkerToken == "" {
				errs <- fmt.Errorf("register %s: no token (worker existed)", id)
				return
			}
			a.token = resp.WorkerToken
			own := hc
			if own == nil {
				own = agentHTTPClient(tlog)
			}
			a.cl, err = client.New(client.Config{Addrs: urls, Token: resp.WorkerToken, HTTPClient: own, MaxRetryWait: 20 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			agents[i] = a
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return agents, nil
}

func (a *simAgent) setRunning(id string, on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if on {
		a.running[id] = true
	} else {
		delete(a.running, id)
	}
}

func (a *simAgent) runningIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.running))
	for id := range a.running {
		ids = append(ids, id)
	}
	return ids
}

// heartbeat sends one heartbeat shaped like agent.Agent's: running tasks,
// devices and executors.
func (a *simAgent) heartbeat(ctx context.Context) (api.HeartbeatResponse, error) {
	return a.cl.Heartbeat(ctx, api.HeartbeatRequest{RunningTaskIDs: a.runningIDs(), Devices: a.devices, Executors: a.executors})
}

// heartbeatLoop heartbeats at the interval the coordinator asks for until
// ctx ends.
func (a *simAgent) heartbeatLoop(ctx context.Context, rec *stats.Recorder) {
	interval := 2 * time.Second
	for {
		t := time.Now()
		resp, err := a.heartbeat(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			rec.Error()
		default:
			rec.Add(time.Since(t))
			if resp.IntervalSeconds > 0 {
				interval = time.Duration(resp.IntervalSeconds * float64(time.Second))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval - time.Since(t)):
		}
	}
}
