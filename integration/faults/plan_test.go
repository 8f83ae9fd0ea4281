package faults

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// A schedule's plan is drawn from its seed before anything runs: the
// faults (kind, start, duration, target, strength) and the jobs (when each
// is submitted, its lease and attempts, what the worker that runs it does,
// whether and when it is cancelled). Replaying a seed replays the plan;
// the interleaving of goroutines, network and Raft timers around it is
// the machine's, so a replay explores the same schedule, not the same
// execution step for step.

// faultKind is a kind of fault.
type faultKind int

const (
	// Coordinator faults, one after another.
	faultStopLeader      faultKind = iota // links cut, then a graceful stop
	faultStopFollower                     // the same, on a follower
	faultSIGKILLLeader                    // the leader's process killed
	faultSIGKILLFollower                  // a follower's process killed
	faultPartitionLeader
	faultPartitionFollower
	faultCutLeaderOut   // one-way: the leader's links to the followers
	faultDelayLink      // one-way delay on one directed link
	faultDropLinks      // connections severed at random on every link
	faultClockStep      // a follower's clock jumps, then the leader is cut off
	faultLogWriteErrors // the leader's next log writes fail
	faultLogSyncErrors  // the leader's next log writes are stored, then fail
	faultDiskFull       // one node's Raft writes fail with ENOSPC for a while
	numCoordinatorFaults
	// Agent faults overlap the others.
	faultPauseAgent // an agent stops heartbeating past its leases, then resumes
	faultCrashAgent // an agent stops for good, holding what it holds
	// Faults on one agent's HTTP links to every coordinator.
	faultCutAgentLinks   // connections severed and refused
	faultDelayAgentLinks // every chunk held in both directions
	faultDropAgentLinks  // connections severed at random
	// Drawn last of all (newPlan), in place of other coordinator faults.
	faultQuorumLoss // two of three coordinators down at once, clocks stepped
	faultWipeNode   // a follower's disk wiped; it rejoins as a new member
	numFaultKinds
)

var faultNames = [...]string{
	"stop-leader", "stop-follower", "sigkill-leader", "sigkill-follower", "partition-leader", "partition-follower",
	"cut-leader-out", "delay-link", "drop-links", "clock-step", "log-write-errors", "log-sync-errors", "disk-full",
	"disk-full-exit", "pause-agent", "crash-agent", "cut-agent-links", "delay-agent-links", "drop-agent-links",
	"quorum-loss", "wipe-node",
}

// Names of what some faults led to, counted with the faults: an agent
// restarted during a quorum loss; a paused agent thawed only once the
// retry of its lost attempt had ended elsewhere, and each late report of
// such an agent refused, as it must be.
const (
	countRestartAgent   = "restart-agent"
	countThawAfterRetry = "thaw-after-retry"
	countLateRefused    = "late-report-refused"
)

// onAgent reports whether k is a fault on an agent or its links, run
// alongside the coordinator faults.
func (k faultKind) onAgent() bool { return k > numCoordinatorFaults && k < faultQuorumLoss }

func (k faultKind) String() string { return faultNames[k] }

// fault is one planned fault.
type fault struct {
	Kind faultKind
	At   time.Duration // from the start of the fault phase
	For  time.Duration
	// Pick chooses among the candidates (followers, links, agents).
	Pick int
	// Delay and Drop are the strength of link faults; Step is a clock
	// step; Writes is how many log writes a disk fault fails.
	Delay  time.Duration
	Drop   float64
	Step   time.Duration
	Writes int
	// Quorum loss: Stop says, for the leader and the follower taken down,
	// whether each is stopped gracefully (else SIGKILLed); RestartAgent,
	// whether the agent whose task ran into the outage is restarted
	// during it. Its For is the outage in real time, Step the outage as
	// the coordinators' clocks see it.
	Stop         [2]bool
	RestartAgent bool
	// ThawAfterRetry (pause-agent): the agent stays frozen until the
	// retries of the attempts it held have ended elsewhere.
	ThawAfterRetry bool
}

func (f fault) String() string {
	s := fmt.Sprintf("%s@%v/%v", f.Kind, f.At.Round(time.Millisecond), f.For.Round(time.Millisecond))
	switch f.Kind {
	case faultDelayLink, faultDelayAgentLinks:
		s += fmt.Sprintf("(delay %v)", f.Delay.Round(time.Millisecond))
	case faultDropLinks, faultDropAgentLinks:
		s += fmt.Sprintf("(drop %.2f)", f.Drop)
	case faultClockStep:
		s += fmt.Sprintf("(step %v)", f.Step)
	case faultLogWriteErrors, faultLogSyncErrors:
		s += fmt.Sprintf("(%d writes)", f.Writes)
	case faultQuorumLoss:
		how := func(stop bool) string {
			if stop {
				return "stop"
			}
			return "kill"
		}
		s += fmt.Sprintf("(clocks +%v, leader %s, follower %s", f.Step, how(f.Stop[0]), how(f.Stop[1]))
		if f.RestartAgent {
			s += ", agent restarted"
		}
		s += ")"
	case faultPauseAgent:
		if f.ThawAfterRetry {
			s += "(until the retries ended)"
		}
	}
	return s
}

// behaviour is what the simulated worker does with a task; it travels in
// the job's executor config, so whichever worker runs the task does the
// same.
type behaviour struct {
	// RunMS is how long the task "runs".
	RunMS int `json:"run_ms"`
	// Exit is the exit code reported.
	Exit int `json:"exit"`
	// FailFirst makes the first attempt report fail (could not run).
	FailFirst bool `json:"fail_first,omitempty"`
	// Resend sends the finish again, same submission id, after its answer.
	Resend bool `json:"resend,omitempty"`
	// Logs is the number of log chunks sent.
	Logs int `json:"logs"`
}

// jobPlan is one planned job.
type jobPlan struct {
	Key         string
	At          time.Duration
	Lease       int
	MaxAttempts int
	GPUs        int
	Do          behaviour
	// CancelAfter is when, after the submit's answer, the job is
	// cancelled; negative: never.
	CancelAfter time.Duration
}

func (j jobPlan) config() json.RawMessage {
	b, _ := json.Marshal(j.Do)
	return b
}

// plan is one schedule.
type plan struct {
	Seed   uint64
	Phase  time.Duration
	Agents int
	Faults []fault
	Jobs   []jobPlan
}

func (p plan) String() string {
	fs := make([]string, len(p.Faults))
	for i, f := range p.Faults {
		fs[i] = f.String()
	}
	return fmt.Sprintf("seed %d: %d jobs, %d agents, faults [%s]", p.Seed, len(p.Jobs), p.Agents, strings.Join(fs, " "))
}

// workload sizes, chosen so that a schedule takes about 4 s on two cores
// (see the campaign's report of the time per schedule).
const (
	phase      = 2400 * time.Millisecond
	minJobs    = 12
	extraJobs  = 8
	agentCount = 3
)

func newPlan(seed uint64) plan {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := plan{Seed: seed, Phase: phase, Agents: agentCount}
	dur := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(r.Int64N(int64(hi-lo)+1)) }

	// Coordinator and link faults run one after another, so that a
	// majority is always up once each heals; one or two per schedule.
	at := dur(150*time.Millisecond, 500*time.Millisecond)
	for n := 1 + r.IntN(2); n > 0 && at < phase-300*time.Millisecond; n-- {
		f := fault{Kind: faultKind(r.IntN(int(numCoordinatorFaults))), At: at, Pick: r.IntN(1 << 20)}
		switch f.Kind {
		case faultStopLeader, faultStopFollower, faultSIGKILLLeader, faultSIGKILLFollower:
			f.For = dur(300*time.Millisecond, 1000*time.Millisecond)
		case faultPartitionLeader, faultPartitionFollower, faultCutLeaderOut:
			f.For = dur(400*time.Millisecond, 1200*time.Millisecond)
		case faultDelayLink:
			f.For = dur(400*time.Millisecond, 1200*time.Millisecond)
			f.Delay = dur(20*time.Millisecond, 400*time.Millisecond)
		case faultDropLinks:
			f.For = dur(300*time.Millisecond, 900*time.Millisecond)
			f.Drop = 0.05 + 0.35*r.Float64()
		case faultClockStep:
			// Seconds to minutes, either way; the leader is then cut off
			// for a while, so that the stepped node may come to lead.
			f.For = dur(400*time.Millisecond, 1000*time.Millisecond)
			f.Step = dur(2*time.Second, 120*time.Second).Round(time.Second)
			if r.IntN(2) == 0 {
				f.Step = -f.Step
			}
		case faultLogWriteErrors, faultLogSyncErrors:
			f.For = dur(300*time.Millisecond, 900*time.Millisecond)
			f.Writes = 1 + r.IntN(20)
		case faultDiskFull:
			f.For = dur(300*time.Millisecond, 1000*time.Millisecond)
		}
		f.For = min(f.For, phase-at)
		p.Faults = append(p.Faults, f)
		at += f.For + dur(100*time.Millisecond, 400*time.Millisecond)
	}
	// Agent faults overlap the others; at most one of each kind, on
	// different agents (the one planned or the next running a task), so
	// that one agent at least works throughout.
	pauseAgent := -1
	if r.Float64() < 0.6 {
		pauseAgent = r.IntN(agentCount)
		// Longer than most leases (1 s; some 2 s) and their re-arming
		// grace after a failover, so that the agent's attempts lapse.
		p.Faults = append(p.Faults, fault{Kind: faultPauseAgent, At: dur(200*time.Millisecond, 800*time.Millisecond), For: dur(2100*time.Millisecond, 3000*time.Millisecond), Pick: pauseAgent})
	}
	if r.Float64() < 0.35 {
		crash := r.IntN(agentCount)
		p.Faults = append(p.Faults, fault{Kind: faultCrashAgent, At: dur(300*time.Millisecond, 1800*time.Millisecond), Pick: crash})
	}

	n := minJobs + r.IntN(extraJobs+1)
	for i := range n {
		j := jobPlan{
			Key:         fmt.Sprintf("s%d-j%d", seed, i),
			At:          time.Duration(int64(i) * int64(phase-400*time.Millisecond) / int64(n)),
			Lease:       1,
			MaxAttempts: 2 + r.IntN(3),
			CancelAfter: -1,
		}
		if r.Float64() < 0.3 {
			j.Lease = 2
		}
		if r.Float64() < 0.5 {
			j.GPUs = 1
		}
		j.Do = behaviour{RunMS: 20 + r.IntN(300), Logs: r.IntN(3), Resend: r.Float64() < 0.3}
		switch x := r.Float64(); {
		case x < 0.1:
			j.Do.Exit = 3
		case x < 0.17:
			j.Do.FailFirst = true
		}
		if r.Float64() < 0.2 {
			j.CancelAfter = dur(0, 600*time.Millisecond)
		}
		p.Jobs = append(p.Jobs, j)
	}

	// A fault on one agent's HTTP links, drawn after everything else so
	// that the seeds of the runs before these faults came in keep the rest
	// of their plan. It goes to an agent no other agent fault took.
	if r.Float64() < 0.5 {
		f := fault{Kind: faultCutAgentLinks + faultKind(r.IntN(3)), At: dur(200*time.Millisecond, 1500*time.Millisecond), Pick: r.IntN(agentCount)}
		switch f.Kind {
		case faultCutAgentLinks:
			// Past most leases, so that the agent's attempts lapse while it
			// runs on, cut off, and finishes late.
			f.For = dur(1200*time.Millisecond, 2500*time.Millisecond)
		case faultDelayAgentLinks:
			f.For = dur(400*time.Millisecond, 1200*time.Millisecond)
			f.Delay = dur(20*time.Millisecond, 300*time.Millisecond)
		case faultDropAgentLinks:
			f.For = dur(300*time.Millisecond, 900*time.Millisecond)
			f.Drop = 0.05 + 0.35*r.Float64()
		}
		p.Faults = append(p.Faults, f)
	}

	// Outages and lost disks, drawn last too, so that older seeds keep
	// their jobs and agent faults (not their coordinator faults when one
	// of these replaces them).
	switch x := r.Float64(); {
	case x < quorumLossShare:
		// Two of three coordinators down at once, in place of the other
		// coordinator faults: for a few seconds of real time (past every
		// lease: 1 or 2 s) and, by the coordinators' clocks, 30 s to
		// 5 min (every clock jumps by Step while no quorum is up).
		f := fault{Kind: faultQuorumLoss, At: dur(150*time.Millisecond, 500*time.Millisecond), For: dur(2200*time.Millisecond, 3000*time.Millisecond), Pick: r.IntN(1 << 20)}
		f.Step = dur(30*time.Second, 300*time.Second).Round(time.Second)
		f.Stop = [2]bool{r.IntN(2) == 0, r.IntN(2) == 0}
		f.RestartAgent = r.IntN(2) == 0
		kept := []fault{f}
		for _, g := range p.Faults {
			if g.Kind.onAgent() {
				kept = append(kept, g)
			}
		}
		p.Faults = kept
	case x < quorumLossShare+wipeShare:
		// The last coordinator fault becomes a follower whose disk is
		// wiped: removed from the Raft configuration, its data dir
		// deleted, and a new member with an empty one added in its place.
		for i := len(p.Faults) - 1; i >= 0; i-- {
			if !p.Faults[i].Kind.onAgent() {
				p.Faults[i] = fault{Kind: faultWipeNode, At: p.Faults[i].At, For: dur(200*time.Millisecond, 600*time.Millisecond), Pick: p.Faults[i].Pick}
				break
			}
		}
	}
	thaw := r.IntN(2) == 0
	for i := range p.Faults {
		if p.Faults[i].Kind == faultPauseAgent {
			p.Faults[i].ThawAfterRetry = thaw
		}
	}
	return p
}

// Shares of schedules with a quorum loss and with a wiped disk: a quorum
// loss makes its schedule about 2 s longer (see the campaign's budget).
const (
	quorumLossShare = 0.3
	wipeShare       = 0.15
)
