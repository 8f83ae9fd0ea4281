package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// result is what the scenario measured.
type result struct {
	jobs, succeeded int
	submitRetries   int64

	killed   string
	election time.Duration // kill → a survivor names a new leader
	failover time.Duration // kill → first assignment made after the kill

	partitioned       string
	partitionFor      time.Duration
	ackedInPartition  int64
	leaderInPartition string

	restartRecovery time.Duration // restart issued → all nodes agree on a leader

	digest  string
	applied uint64
	nodes   int
}

func (r result) summary() string {
	d := r.digest
	if len(d) > 12 {
		d = d[:12]
	}
	return fmt.Sprintf("cluster test: %d jobs, %d succeeded exactly once, faults: leader %s killed (failover %.2fs, election %.2fs), follower %s partitioned %s (%d jobs acknowledged meanwhile), full restart (leader again after %.1fs); %d nodes agree (applied index %d, digest %s…); ok",
		r.jobs, r.succeeded, r.killed, r.failover.Seconds(), r.election.Seconds(),
		r.partitioned, r.partitionFor, r.ackedInPartition, r.restartRecovery.Seconds(), r.nodes, r.applied, d)
}

func (s *scenario) run(ctx context.Context) (result, error) {
	var res result
	res.jobs = s.cfg.jobs
	all := s.cfg.nodes

	// 0. The cluster formed, and the agents registered.
	leader, err := s.waitLeader(ctx, "a leader every coordinator agrees on", all, formTimeout)
	if err != nil {
		return res, err
	}
	s.logf("cluster formed: leader %s", leader.id)
	if err := s.waitWorkers(ctx); err != nil {
		return res, err
	}
	s.logf("workers %s ready", s.cfg.workers)
	network, err := s.network(ctx)
	if err != nil {
		return res, err
	}

	// 1. Jobs flow from the background; the submitter stops before the
	// partition's share until the follower is cut off.
	n := s.cfg.jobs
	sub := newSubmitter(s, n, s.cfg.pace)
	s.sub = sub
	killAt, cutAt := n/4, n*11/20
	openPartitionGate := sub.gate(cutAt)
	subCtx, stopSub := context.WithCancel(ctx)
	defer stopSub()
	go sub.run(subCtx)
	s.logf("submitting %d echo jobs (idempotency keys %s-NNN)", n, s.cfg.runID)

	if err := s.waitFor(ctx, fmt.Sprintf("%d jobs acknowledged", killAt), 2*time.Minute, 20*time.Millisecond, func(context.Context) (bool, string) {
		if _, err := sub.result(); err != nil {
			return true, "" // the submitter gave up; reported below
		}
		a := sub.acked.Load()
		return a >= int64(killAt), fmt.Sprintf("%d acknowledged", a)
	}); err != nil {
		return res, err
	}
	if _, err := sub.result(); err != nil {
		return res, err
	}

	// 2. Kill the leader.
	if err := s.killLeader(ctx, &res); err != nil {
		return res, err
	}

	// 3. Cut a follower off while jobs keep flowing.
	if err := s.partition(ctx, network, openPartitionGate, &res); err != nil {
		return res, err
	}

	// 4. Every job acknowledged, then restart every coordinator at once.
	select {
	case <-sub.done:
	case <-ctx.Done():
		return res, fmt.Errorf("waiting for the submitter: %w", ctx.Err())
	}
	ids, err := sub.result()
	if err != nil {
		return res, err
	}
	res.submitRetries = sub.retries.Load()
	s.logf("all %d jobs acknowledged (%d submit retries)", n, res.submitRetries)
	if err := s.restartAll(ctx, &res); err != nil {
		return res, err
	}

	// 5. Every job ends; each task succeeded exactly once.
	if err := s.waitTerminal(ctx, ids); err != nil {
		return res, err
	}
	succeeded, err := s.checkJobs(ctx, ids)
	res.succeeded = succeeded
	if err != nil {
		return res, err
	}
	s.logf("%d jobs succeeded exactly once", succeeded)

	// 6. Every coordinator holds the same state.
	if err := s.checkConverged(ctx, n, &res); err != nil {
		return res, err
	}
	if err := s.checkContainers(ctx); err != nil {
		return res, err
	}

	// 7. The exec executor's tasks run in the task sandbox.
	sctx, cancel := context.WithTimeout(ctx, sandboxTimeout)
	defer cancel()
	if err := s.checkSandbox(sctx); err != nil {
		return res, err
	}
	return res, nil
}

// killLeader kills the leader's container, measures the election and the
// first assignment after the kill, then starts it again and waits until it
// has caught up.
func (s *scenario) killLeader(ctx context.Context, res *result) error {
	leader, err := s.waitLeader(ctx, "a leader before the kill", s.cfg.nodes, electionTimeout)
	if err != nil {
		return err
	}
	res.killed = leader.id
	s.logf("killing the leader %s (container %s)", leader.id, leader.container)
	if err := s.docker.kill(ctx, leader.container); err != nil {
		return err
	}
	killed, err := s.deathTime(ctx, leader.container)
	if err != nil {
		return err
	}
	survivors := s.others(leader)

	err = s.waitFor(ctx, "a new leader after the kill", electionTimeout, 20*time.Millisecond, func(ctx context.Context) (bool, string) {
		for _, n := range survivors {
			if l, err := s.probe.leader(ctx, n); err == nil && l.LeaderID != "" && l.LeaderID != leader.id {
				return true, ""
			}
		}
		return false, "no survivor names a new leader"
	})
	if err != nil {
		return err
	}
	res.election = time.Since(killed)
	s.lastLeaderChange = time.Now()
	newLeader, err := s.waitLeader(ctx, "the survivors to agree on a leader", survivors, electionTimeout)
	if err != nil {
		return err
	}
	s.logf("new leader %s named %.2fs after the kill", newLeader.id, res.election.Seconds())

	var first time.Time
	err = s.waitFor(ctx, "an agent acquire served after the kill", acquireTimeout, 100*time.Millisecond, func(ctx context.Context) (bool, string) {
		at, ok, err := s.firstAssignment(ctx, killed)
		if err != nil {
			return false, err.Error()
		}
		first = at
		return ok, "no task assigned since the kill"
	})
	if err != nil {
		return err
	}
	res.failover = max(first.Sub(killed), 0)
	s.logf("failover: first task assigned %.2fs after the kill", res.failover.Seconds())
	if s.cfg.maxFailover > 0 && res.failover > s.cfg.maxFailover {
		return fmt.Errorf("failover took %.2fs, more than -max-failover %s", res.failover.Seconds(), s.cfg.maxFailover)
	}

	if err := s.docker.start(ctx, leader.container); err != nil {
		return err
	}
	s.logf("started %s again", leader.id)
	current, err := s.waitLeader(ctx, "a leader the survivors agree on", survivors, electionTimeout)
	if err != nil {
		return err
	}
	if err := s.waitCaughtUp(ctx, leader, current, rejoinTimeout); err != nil {
		return err
	}
	s.logf("%s rejoined and caught up with leader %s", leader.id, current.id)
	return nil
}

// deathTime waits until a killed container has stopped and returns when
// it did, as Docker recorded it: the reference point of the failover.
// Timestamps the coordinators stamp (millisecond precision) compare with
// it: the containers share the host's clock.
func (s *scenario) deathTime(ctx context.Context, container string) (time.Time, error) {
	var at time.Time
	err := s.waitFor(ctx, container+" to stop", 10*time.Second, 10*time.Millisecond, func(ctx context.Context) (bool, string) {
		t, stopped, err := s.docker.finishedAt(ctx, container)
		if err != nil {
			return false, err.Error()
		}
		at = t
		return stopped, "still running"
	})
	return at, err
}

// partition disconnects a follower from the cluster network for the
// configured time, lets the submitter go on meanwhile, reconnects it and
// waits until it has caught up.
func (s *scenario) partition(ctx context.Context, network string, openGate func(), res *result) error {
	defer openGate()
	leader, err := s.waitLeader(ctx, "a leader before the partition", s.cfg.nodes, electionTimeout)
	if err != nil {
		return err
	}
	var follower *node
	for _, n := range s.others(leader) {
		if n.id != res.killed {
			follower = n
			break
		}
	}
	if follower == nil {
		follower = s.others(leader)[0]
	}
	eps, err := s.docker.networks(ctx, follower.container)
	if err != nil {
		return err
	}
	ep, ok := eps[network]
	if !ok {
		return fmt.Errorf("container %s is not on network %s", follower.container, network)
	}
	res.partitioned = follower.id
	res.partitionFor = s.cfg.partition
	s.logf("cutting follower %s off network %s for %s (leader %s)", follower.id, network, s.cfg.partition, leader.id)
	if err := s.docker.disconnect(ctx, network, follower.container); err != nil {
		return err
	}
	// From here on the follower must be reconnected whatever happens.
	reconnected := false
	defer func() {
		if !reconnected {
			_ = s.docker.connect(context.WithoutCancel(ctx), network, follower.container, ep)
		}
	}()
	before := s.sub.acked.Load()
	openGate()

	// The fault's duration is the one deliberate wait of the scenario.
	select {
	case <-time.After(s.cfg.partition):
	case <-ctx.Done():
		return ctx.Err()
	}
	majority := s.others(follower)
	if l, why := s.agreedLeader(ctx, majority); l != "" {
		res.leaderInPartition = l
	} else {
		s.logf("note: the majority side does not agree on a leader at the end of the partition: %s", why)
	}
	res.ackedInPartition = s.sub.acked.Load() - before

	if err := s.docker.connect(ctx, network, follower.container, ep); err != nil {
		return err
	}
	reconnected = true
	s.logf("reconnected %s; %d jobs acknowledged during the partition; majority leader %s", follower.id, res.ackedInPartition, res.leaderInPartition)
	if res.ackedInPartition == 0 {
		return errors.New("no job was acknowledged while one follower was cut off: the majority side should stay available")
	}
	current, err := s.waitLeader(ctx, "a leader the majority agrees on", majority, electionTimeout)
	if err != nil {
		return err
	}
	if current != leader {
		s.lastLeaderChange = time.Now()
		s.logf("note: leadership moved from %s to %s during the partition of a follower", leader.id, current.id)
	}
	if err := s.waitCaughtUp(ctx, follower, current, rejoinTimeout); err != nil {
		return err
	}
	s.logf("%s rejoined and caught up with leader %s", follower.id, current.id)
	return nil
}

// restartAll restarts every coordinator container at once and waits for a
// leader they all agree on.
func (s *scenario) restartAll(ctx context.Context, res *result) error {
	s.logf("restarting all %d coordinators", len(s.cfg.nodes))
	began := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(s.cfg.nodes))
	for i, n := range s.cfg.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.docker.restart(ctx, n.container)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	leader, err := s.waitLeader(ctx, "a leader after the full restart", s.cfg.nodes, restartTimeout)
	if err != nil {
		return err
	}
	res.restartRecovery = time.Since(began)
	s.lastLeaderChange = time.Now()
	s.logf("after the full restart every coordinator follows %s (%.1fs after the restart began)", leader.id, res.restartRecovery.Seconds())
	return nil
}
