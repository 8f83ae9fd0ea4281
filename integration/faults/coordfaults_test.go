package faults

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
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
			c.Restart(n)
		case faultSIGKILLLeader, faultSIGKILLFollower:
			n := l
			if f.Kind == faultSIGKILLFollower {
				n = follower
			}
			c.Kill(n)
			hold(f.For)
			c.Restart(n)
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
				c.Restart(n)
			}
		}
	}
}

// faultDiskFullExit counts the nodes a full disk stopped (not a fault of
// its own: a consequence of faultDiskFull).
const faultDiskFullExit = numCoordinatorFaults

func (r *run) links() [][2]*coordinatortest.Node {
	var out [][2]*coordinatortest.Node
	for _, a := range r.c.Nodes {
		for _, b := range r.c.Nodes {
			if a != b {
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
