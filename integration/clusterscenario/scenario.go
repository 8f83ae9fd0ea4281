package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

type config struct {
	nodes     []*node
	caFile    string
	agents    []string
	workers   string
	network   string
	docker    string
	jobs      int
	pace      time.Duration
	partition time.Duration
	timeout   time.Duration
	runID     string
	// maxFailover, when positive, bounds the measured failover.
	maxFailover time.Duration
	token       string
}

// Deadlines of the scenario's waits. Each wait polls its condition; none
// sleeps to synchronise.
const (
	formTimeout     = 90 * time.Second
	electionTimeout = 30 * time.Second
	acquireTimeout  = 60 * time.Second
	rejoinTimeout   = 60 * time.Second
	restartTimeout  = 90 * time.Second
	finishTimeout   = 150 * time.Second
	convergeTimeout = 60 * time.Second
)

type scenario struct {
	cfg    config
	docker dockerCLI
	probe  *prober
	client *client.Client
	sub    *submitter
	// lastLeaderChange is when the scenario last saw a new leader take
	// office after a fault.
	lastLeaderChange time.Time
}

func newScenario(cfg config) (*scenario, error) {
	tr, err := transport(cfg.nodes, cfg.caFile)
	if err != nil {
		return nil, err
	}
	addrs := make([]string, len(cfg.nodes))
	for i, n := range cfg.nodes {
		addrs[i] = n.url
	}
	c, err := client.New(client.Config{
		Addrs:        addrs,
		Token:        cfg.token,
		HTTPClient:   &http.Client{Transport: slowLogger{tr}, Timeout: 20 * time.Second},
		MaxRetryWait: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	return &scenario{
		cfg:    cfg,
		docker: dockerCLI{bin: cfg.docker},
		probe:  &prober{http: &http.Client{Transport: tr}, token: cfg.token},
		client: c,
	}, nil
}

func (s *scenario) logf(format string, args ...any) { logf(format, args...) }

var (
	logMu sync.Mutex
	began = time.Now()
)

// logf writes a progress line to stderr, stamped with the time since the
// program started.
func logf(format string, args ...any) {
	logMu.Lock()
	defer logMu.Unlock()
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(began).Seconds(), fmt.Sprintf(format, args...))
}

// waitFor polls cond every interval until it holds, the limit passes or
// ctx ends. The error names what was awaited and the last reason it did
// not hold.
func (s *scenario) waitFor(parent context.Context, what string, limit, every time.Duration, cond func(context.Context) (bool, string)) error {
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	t := time.NewTicker(every)
	defer t.Stop()
	last := ""
	for {
		ok, why := cond(ctx)
		if ok {
			return nil
		}
		if why != "" && ctx.Err() == nil {
			last = why
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return fmt.Errorf("waiting for %s: %w", what, context.Cause(parent))
			}
			if last != "" {
				return fmt.Errorf("waiting for %s: gave up after %s: %s", what, limit, last)
			}
			return fmt.Errorf("waiting for %s: gave up after %s", what, limit)
		case <-t.C:
		}
	}
}

func (s *scenario) node(id string) *node {
	for _, n := range s.cfg.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// agreedLeader returns the leader every node in among names, or why not.
func (s *scenario) agreedLeader(ctx context.Context, among []*node) (string, string) {
	leader := ""
	for _, n := range among {
		l, err := s.probe.leader(ctx, n)
		switch {
		case err != nil:
			return "", err.Error()
		case l.LeaderID == "":
			return "", n.id + " knows no leader"
		case leader == "":
			leader = l.LeaderID
		case l.LeaderID != leader:
			return "", fmt.Sprintf("%s follows %s, another node %s", n.id, l.LeaderID, leader)
		}
	}
	return leader, ""
}

// waitLeader waits until every node in among names the same leader.
func (s *scenario) waitLeader(ctx context.Context, what string, among []*node, limit time.Duration) (*node, error) {
	var leader string
	err := s.waitFor(ctx, what, limit, 50*time.Millisecond, func(ctx context.Context) (bool, string) {
		l, why := s.agreedLeader(ctx, among)
		leader = l
		return l != "", why
	})
	if err != nil {
		return nil, err
	}
	n := s.node(leader)
	if n == nil {
		return nil, fmt.Errorf("the leader %q is not one of -node-ids", leader)
	}
	return n, nil
}

// waitCaughtUp waits until n follows leader and has applied what leader
// had applied when the wait began.
func (s *scenario) waitCaughtUp(ctx context.Context, n, leader *node, limit time.Duration) error {
	var target uint64
	return s.waitFor(ctx, n.id+" to rejoin and catch up", limit, 100*time.Millisecond, func(ctx context.Context) (bool, string) {
		if target == 0 {
			d, err := s.probe.digest(ctx, leader)
			if err != nil {
				return false, err.Error()
			}
			target = d.AppliedIndex
		}
		l, err := s.probe.leader(ctx, n)
		if err != nil {
			return false, err.Error()
		}
		if l.LeaderID != leader.id {
			return false, fmt.Sprintf("%s follows %q, not %s", n.id, l.LeaderID, leader.id)
		}
		d, err := s.probe.digest(ctx, n)
		if err != nil {
			return false, err.Error()
		}
		if d.AppliedIndex < target {
			return false, fmt.Sprintf("%s applied %d of %d", n.id, d.AppliedIndex, target)
		}
		return true, ""
	})
}

// waitWorkers waits until every expected worker is registered and ready.
func (s *scenario) waitWorkers(ctx context.Context) error {
	want := split(s.cfg.workers)
	return s.waitFor(ctx, "the agents to register", formTimeout, 250*time.Millisecond, func(ctx context.Context) (bool, string) {
		ws, err := s.client.Workers(ctx)
		if err != nil {
			return false, err.Error()
		}
		status := map[string]string{}
		for _, w := range ws {
			status[w.WorkerID] = w.Status
		}
		for _, id := range want {
			if st, ok := status[id]; !ok || st != "ready" {
				return false, fmt.Sprintf("worker %s is %q", id, st)
			}
		}
		return true, ""
	})
}

// firstAssignment scans every job for the earliest attempt assigned at or
// after since.
func (s *scenario) firstAssignment(ctx context.Context, since time.Time) (time.Time, bool, error) {
	jobs, err := s.client.Jobs(ctx, 0)
	if err != nil {
		return time.Time{}, false, err
	}
	var first time.Time
	for _, j := range jobs {
		for _, t := range j.Tasks {
			for _, a := range t.Attempts {
				at, err := api.ParseTime(a.AssignedAt)
				if err != nil || at.Before(since) {
					continue
				}
				if first.IsZero() || at.Before(first) {
					first = at
				}
			}
		}
	}
	return first, !first.IsZero(), nil
}

func (s *scenario) others(not ...*node) []*node {
	var out []*node
outer:
	for _, n := range s.cfg.nodes {
		for _, x := range not {
			if n == x {
				continue outer
			}
		}
		out = append(out, n)
	}
	return out
}

// network is the docker network the coordinators share.
func (s *scenario) network(ctx context.Context) (string, error) {
	if s.cfg.network != "" {
		return s.cfg.network, nil
	}
	eps, err := s.docker.networks(ctx, s.cfg.nodes[0].container)
	if err != nil {
		return "", err
	}
	if len(eps) != 1 {
		names := make([]string, 0, len(eps))
		for k := range eps {
			names = append(names, k)
		}
		sort.Strings(names)
		return "", fmt.Errorf("container %s is on networks %v: pass -network", s.cfg.nodes[0].container, names)
	}
	for k := range eps {
		return k, nil
	}
	return "", errors.New("unreachable")
}
