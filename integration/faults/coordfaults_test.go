package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/internal/faultproxy"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// coordinatorFaults applies the node, link, clock and disk faults one
// after another, each undone when its time is up (a clock step is not: a
// stepped node keeps its skew).
func (r *run) coordinatorFaults(start time.Time, fs []fault) {
	c := r.c
	for _, f := range fs {
		until(start.Add(f.At))
		l := r.leader()
		if l == nil {
			r.mu.Lock()
			r.skipped++
			r.mu.Unlock()
			continue
		}
		fol := r.followers(l)
		follower := fol[f.Pick%len(fol)]
		r.count(f.Kind)
		switch f.Kind {
		case faultStopLeader, faultStopFollower:
			n := l
			if f.Kind == faultStopFollower {
				n = follower
			}
			// Cut its Raft links first, so that it says nothing more to
			// its peers; then stop it gracefully.
			c.Partition(n)
			r.hc.CloseIdleConnections() // or the stop waits for them
			c.Stop(n)
			hold(f.For)
			c.Heal()
			r.restartNode(n)
		case faultSIGKILLLeader, faultSIGKILLFollower:
			n := l
			if f.Kind == faultSIGKILLFollower {
				n = follower
			}
			c.Kill(n)
			hold(f.For)
			r.restartNode(n)
		case faultPartitionLeader, faultPartitionFollower:
			n := l
			if f.Kind == faultPartitionFollower {
				n = follower
			}
			c.Partition(n)
			hold(f.For)
			c.Heal()
		case faultCutLeaderOut:
			for _, n := range fol {
				c.Link(l, n).SetBlocked(true)
			}
			hold(f.For)
			c.Heal()
		case faultDelayLink:
			links := r.links()
			ln := links[f.Pick%len(links)]
			c.Link(ln[0], ln[1]).SetDelay(f.Delay)
			hold(f.For)
			c.Heal()
		case faultDropLinks:
			for _, ln := range r.links() {
				c.Link(ln[0], ln[1]).SetDropRate(f.Drop)
			}
			hold(f.For)
			c.Heal()
		case faultClockStep:
			// A follower's clock jumps (it has no lease timers to carry
			// across the jump, as Go's monotonic clock would for a real
			// step); the leader is then cut off, so that the stepped node
			// may come to lead with its skewed clock.
			r.control(follower, fmt.Sprintf("clock %s", f.Step))
			c.Partition(l)
			hold(f.For)
			c.Heal()
		case faultLogWriteErrors, faultLogSyncErrors:
			cmd := "fail-writes"
			if f.Kind == faultLogSyncErrors {
				cmd = "fail-syncs"
			}
			r.control(l, fmt.Sprintf("%s %d", cmd, f.Writes))
			hold(f.For)
			r.control(l, cmd+" 0")
		case faultDiskFull:
			n := c.Nodes[f.Pick%len(c.Nodes)]
			from := time.Now()
			r.control(n, "disk-full on")
			hold(f.For)
			r.control(n, "disk-full off")
			r.mu.Lock()
			r.fullDisk[n.ID] = append(r.fullDisk[n.ID], [2]time.Time{from, time.Now()})
			r.mu.Unlock()
			if !n.Running() {
				// hashicorp/raft panics when it cannot save its term: the
				// node died of its full disk, and its supervisor would
				// start it again.
				r.count(faultDiskFullExit)
				r.restartNode(n)
			}
		case faultQuorumLoss:
			r.quorumLoss(l, follower, f)
		case faultWipeNode:
			r.wipeNode(follower, f)
		}
	}
}

// restartNode starts a stopped node again on its data dir. After a
// quorum loss stepped every clock, it comes back cut off from its peers
// until its clock has been stepped as far, so that it never leads on a
// clock that disagrees with the others'.
func (r *run) restartNode(n *coordinatortest.Node) {
	r.mu.Lock()
	step := r.clockStep
	r.mu.Unlock()
	if step == 0 {
		r.c.Restart(n)
		return
	}
	r.c.Partition(n)
	r.c.Restart(n)
	r.control(n, "clock "+step.String())
	r.c.Heal()
}

// quorumLoss takes the leader and a follower down at once (each stopped
// gracefully or SIGKILLed, as planned) while an agent runs a task: for
// f.For of real time, past every lease, and, by the coordinators' clocks,
// f.Step longer: every running node's clock jumps by f.Step before the
// two come back, and theirs as far once they are up and before they can
// talk to anyone. The task ends during the outage and its report waits in
// the agent's spool; with f.RestartAgent the agent is restarted meanwhile,
// once the report is kept. Leases must not count the outage: the reports
// are taken once a leader is back, and done work never runs again
// (checkDoneWork).
func (r *run) quorumLoss(l, follower *coordinatortest.Node, f fault) {
	c := r.c
	// The agent whose task runs into the outage: the first, from the
	// planned one on, that runs one, one no agent fault took if any does;
	// waiting up to a second and a half for one to.
	var a *simAgent
	var atts map[string]string
	for deadline := time.Now().Add(1500 * time.Millisecond); a == nil && time.Now().Before(deadline); {
		r.mu.Lock()
		for pass := range 2 {
			for i := range r.agents {
				b := r.agents[(f.Pick+i)%len(r.agents)]
				if a != nil || b.wasKilled() || (pass == 0 && r.faulted[b]) {
					continue
				}
				if m := b.midwayAttempts(); len(m) > 0 {
					a, atts = b, m
				}
			}
		}
		r.mu.Unlock()
		if a == nil {
			<-time.After(5 * time.Millisecond)
		}
	}
	if nl := r.leader(); nl != nil && nl != l {
		fol := r.followers(nl)
		l, follower = nl, fol[f.Pick%len(fol)]
	}
	down := []*coordinatortest.Node{l, follower}
	for i, n := range down {
		if f.Stop[i] {
			c.Partition(n) // it says nothing more to its peers
		}
	}
	r.hc.CloseIdleConnections() // or a graceful stop waits for them
	for _, hc := range r.clients {
		hc.CloseIdleConnections()
	}
	var wg sync.WaitGroup
	for i, n := range down {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.Stop[i] {
				c.Stop(n)
			} else {
				c.Kill(n)
			}
		}()
	}
	wg.Wait()
	downAt := time.Now()
	name := "no agent"
	if a != nil {
		name = a.id
	}
	r.t.Logf("quorum lost at %s ms: %s and %s down; %s runs %v", ms(r.rec.now()), l.ID, follower.ID, name, atts)
	if a != nil {
		// The runs end during the outage and their reports are kept
		// (unless the agent is frozen, or the tasks were stopped).
		deadline := time.Now().Add(2 * time.Second)
		for att := range atts {
			for a.holds(att) && !a.kept(att) && time.Now().Before(deadline) {
				<-time.After(5 * time.Millisecond)
			}
		}
		for att := range atts {
			if a.kept(att) {
				r.mu.Lock()
				r.waited[att] = a
				r.mu.Unlock()
			}
		}
		if f.RestartAgent && a.restart() {
			r.countName(countRestartAgent)
			r.t.Logf("restarted %s during the outage at %s ms", a.id, ms(r.rec.now()))
		}
	}
	until(downAt.Add(f.For))
	r.mu.Lock()
	r.clockStep += f.Step
	total := r.clockStep
	r.mu.Unlock()
	for _, n := range r.members() {
		if n.Running() {
			r.control(n, "clock "+f.Step.String())
		}
	}
	// Back, cut off until their clocks agree with the others'.
	for _, n := range down {
		c.Partition(n)
	}
	for _, n := range down {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Restart(n)
			r.control(n, "clock "+total.String())
		}()
	}
	wg.Wait()
	c.Heal()
	r.t.Logf("quorum back at %s ms (clocks +%v)", ms(r.rec.now()), total)
}

// wipeNode loses a follower's disk: the node is SIGKILLed, removed from
// the Raft configuration, its data dir deleted, and after f.For a new
// member with an empty data dir (a new node id and addresses: Raft cannot
// take a member back under its old id once it forgot its log) is started,
// added, and catches up from the leader. The campaign's clients and
// agents know the new node's address only from the leader's name in a
// not_leader answer (as a real client configured with the old list
// would); each agent's fault proxies cover it too.
func (r *run) wipeNode(n *coordinatortest.Node, f fault) {
	c := r.c
	c.Kill(n)
	r.mu.Lock()
	r.removed[n] = true
	r.mu.Unlock()
	if err := r.operator(func(ctx context.Context) error {
		_, err := r.admin.RemovePeer(ctx, n.ID)
		if client.IsCode(err, api.CodeNotFound) {
			return nil // an earlier try took effect
		}
		return err
	}); err != nil {
		r.problem("wipe-node: removing %s from the configuration: %v", n.ID, err)
	}
	// coordinatortest's AddNode gives a new member the cluster's
	// bootstrap file from the first node's data dir: when that node is
	// the one wiped, the file (the harness's input, not the node's state)
	// is put back alone.
	boot := filepath.Join(c.Nodes[0].DataDir, coordinator.BootstrapFile)
	keep, err := os.ReadFile(boot)
	if err != nil {
		r.problem("wipe-node: %v", err)
		return
	}
	if err := os.RemoveAll(n.DataDir); err != nil {
		r.problem("wipe-node: %v", err)
	}
	if n == c.Nodes[0] {
		if err := os.MkdirAll(n.DataDir, 0o700); err != nil {
			r.problem("wipe-node: %v", err)
		}
		if err := os.WriteFile(boot, keep, 0o600); err != nil {
			r.problem("wipe-node: %v", err)
		}
	}
	hold(f.For)
	m := c.AddNode()
	if !m.Running() {
		r.problem("wipe-node: the new member %s did not start", m.ID)
		return
	}
	r.mu.Lock()
	step := r.clockStep
	r.mu.Unlock()
	if step != 0 {
		r.control(m, "clock "+step.String()) // it cannot lead before it is added
	}
	r.addAgentLinks(m)
	if err := r.operator(func(ctx context.Context) error {
		_, err := r.admin.AddPeer(ctx, m.ID, m.RaftAddr)
		return err
	}); err != nil {
		r.problem("wipe-node: adding %s to the configuration: %v", m.ID, err)
		return
	}
	r.t.Logf("wiped %s; %s joined in its place at %s ms", n.ID, m.ID, ms(r.rec.now()))
}

// operator makes an operator call until it succeeds, for up to 20 s.
func (r *run) operator(call func(ctx context.Context) error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(r.t.Context(), callTimeout)
		err := call(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		<-time.After(100 * time.Millisecond)
	}
}

// addAgentLinks puts a fault proxy of each agent in front of a node added
// during the schedule, with the fault the agent's links carry now.
func (r *run) addAgentLinks(m *coordinatortest.Node) {
	r.adminBook.add(m.HTTPAddr, m.ID, "")
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.agents {
		px, err := faultproxy.New(m.HTTPAddr)
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("wipe-node: a proxy for %s: %v", m.ID, err))
			continue
		}
		r.tb.Cleanup(func() { _ = px.Close() })
		r.linkState[a].apply(px)
		r.agentLinks[a] = append(r.agentLinks[a], px)
		r.books[a].add(m.HTTPAddr, m.ID, px.Addr())
	}
}

// faultDiskFullExit counts the nodes a full disk stopped (not a fault of
// its own: a consequence of faultDiskFull).
const faultDiskFullExit = numCoordinatorFaults

// links lists the directed Raft links between members that carry a
// fault proxy (a member added during the schedule has none).
func (r *run) links() [][2]*coordinatortest.Node {
	var out [][2]*coordinatortest.Node
	mem := r.members()
	for _, a := range mem {
		for _, b := range mem {
			if a != b && r.c.Link(a, b) != nil {
				out = append(out, [2]*coordinatortest.Node{a, b})
			}
		}
	}
	return out
}

// control sends a command to a node's process; a node that has died
// meanwhile (of a full disk, say) is no error.
func (r *run) control(n *coordinatortest.Node, cmd string) {
	if _, err := n.Control(cmd); err != nil && !errors.Is(err, coordinatortest.ErrExited) {
		r.problem("%s: %s: %v", n.ID, cmd, err)
	}
}

// checkExits reports every coordinator process that ended by itself,
// except one whose disk was full at the time (or had just been freed).
func (r *run) checkExits() {
	r.mu.Lock()
	full := r.fullDisk
	r.mu.Unlock()
next:
	for _, e := range r.c.Exits() {
		for _, w := range full[e.Node] {
			if !e.At.Before(w[0]) && !e.At.After(w[1].Add(time.Second)) {
				continue next
			}
		}
		r.problem("coordinator %s exited by itself at %s: %s\n%s", e.Node, e.At.Format("15:04:05.000"), e.Err, e.Tail)
	}
}
