//go:build linux

package agentfaults

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Fault kinds a schedule draws from.
const (
	faultPause         = "pause-agent"    // SIGSTOP past the lease of a task it runs, then SIGCONT
	faultKill          = "kill-agent"     // SIGKILL, then a restart on the same data dir
	faultCrashPlugin   = "crash-plugin"   // SIGKILL of a plugin process while it runs a task
	faultRestartLeader = "restart-leader" // the leading coordinator stopped, then restarted
	// Two of three coordinators killed while a task runs, past its lease
	// and its end; the agent perhaps restarted meanwhile.
	faultQuorumLoss = "quorum-loss"
)

var faultKinds = []string{faultPause, faultKill, faultCrashPlugin, faultRestartLeader, faultQuorumLoss}

// jobPlan is one job of a schedule's workload.
type jobPlan struct {
	Key   string        // names its locks and events
	At    time.Duration // submitted this long after the workload starts
	GPUs  int
	Sleep time.Duration // how long its task runs
	Exit  int           // the exit code its task ends with
}

// faultPlan is one fault of a schedule.
type faultPlan struct {
	Kind string
	// Gap is how long after the previous fault ended (or the workload
	// started) this one begins.
	Gap   time.Duration
	Agent int // the agent it hits (agent faults)
	// Down is how long a killed agent or coordinator stays down before
	// its restart.
	Down time.Duration
	// Step (quorum-loss) is how much longer the outage lasts as the
	// coordinators see it: their clocks jump by it while no quorum is
	// up, 30 to 300 s, so that every deadline the state holds lies that
	// far in the past when a leader is back.
	Step time.Duration
	// RestartAgent (quorum-loss): the agent is killed with SIGKILL and
	// started again on its data dir during the outage, once its task's
	// report is in its spool.
	RestartAgent bool
	// ThawAfterRetry (pause-agent): the agent stays frozen until the
	// retry of its lost attempt has ended elsewhere.
	ThawAfterRetry bool
	// Target is the job an agent fault waits for to run on its agent
	// before it strikes: pinned to that worker, so that its retry comes
	// back to the same worker (and to its restarted agent).
	Target jobPlan
}

// plan is everything a seed decides: how many agents, the jobs, the
// faults. The goroutines' timing is not decided, so a replay reproduces
// most failures, not every one.
type plan struct {
	Seed   uint64
	Agents int
	// SharedTaskUser marks the agents that, as root, run every task as
	// one --task-user instead of a uid per slot.
	SharedTaskUser []bool
	Jobs           []jobPlan
	Faults         []faultPlan
}

// Workload shape: a stream of short jobs over about five seconds.
const (
	leaseSeconds = 2
	maxAttempts  = 4
	agentSlots   = 3
)

func newPlan(seed uint64) plan {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := plan{Seed: seed, Agents: 2 + r.IntN(2)}
	for range p.Agents {
		p.SharedTaskUser = append(p.SharedTaskUser, r.IntN(3) == 0)
	}
	nJobs := 12 + r.IntN(7)
	at := time.Duration(0)
	gpuChoices := []int{0, 0, 1, 1, 2, 4}
	for i := range nJobs {
		j := jobPlan{
			Key:   fmt.Sprintf("j%02d", i),
			At:    at,
			GPUs:  gpuChoices[r.IntN(len(gpuChoices))],
			Sleep: time.Duration(100+r.IntN(701)) * time.Millisecond,
		}
		if r.IntN(7) == 0 {
			j.Exit = 1 + r.IntN(5) // fails on purpose
		}
		p.Jobs = append(p.Jobs, j)
		at += time.Duration(150+r.IntN(300)) * time.Millisecond
	}
	// Every schedule kills an agent and crashes a plugin, and pauses an
	// agent (odd seeds) or restarts the leader (even seeds), so that any
	// two seeds in a row cover every kind; perhaps one more fault of any
	// kind joins them; in a random order.
	// Every schedule also loses its quorum once.
	kinds := []string{faultKill, faultCrashPlugin, []string{faultRestartLeader, faultPause}[seed%2], faultQuorumLoss}
	if r.IntN(2) == 0 {
		kinds = append(kinds, faultKinds[r.IntN(len(faultKinds))])
	}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	for i, kind := range kinds {
		f := faultPlan{
			Kind:  kind,
			Gap:   time.Duration(200+r.IntN(800)) * time.Millisecond,
			Agent: r.IntN(p.Agents),
			Down:  time.Duration(r.IntN(1000)) * time.Millisecond,
		}
		switch kind {
		case faultQuorumLoss:
			// Down outlives the lease with room: a lease that counted
			// the outage would lapse.
			f.Down = time.Duration(2500+r.IntN(1500)) * time.Millisecond
			f.Step = time.Duration(30+r.IntN(271)) * time.Second
			f.RestartAgent = r.IntN(2) == 0
		case faultPause:
			f.ThawAfterRetry = r.IntN(2) == 0
		}
		if kind != faultRestartLeader {
			// Long enough to outlive the lease, so that a process that
			// survived the fault would still hold its locks when the
			// task is handed out again.
			f.Target = jobPlan{Key: fmt.Sprintf("f%d", i), GPUs: gpuChoices[r.IntN(len(gpuChoices))],
				Sleep: time.Duration(3000+r.IntN(1500)) * time.Millisecond}
		}
		p.Faults = append(p.Faults, f)
	}
	return p
}

func (p plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d agents (one task user: %v), %d jobs; faults:", p.Seed, p.Agents, p.SharedTaskUser, len(p.Jobs))
	for _, f := range p.Faults {
		fmt.Fprintf(&b, " +%v %s(agent %d, down %v", f.Gap.Round(time.Millisecond), f.Kind, f.Agent, f.Down.Round(time.Millisecond))
		if f.Step > 0 {
			fmt.Fprintf(&b, ", clocks +%v", f.Step)
		}
		if f.RestartAgent {
			b.WriteString(", agent restarted")
		}
		if f.ThawAfterRetry {
			b.WriteString(", thawed after the retry")
		}
		b.WriteString(")")
	}
	return b.String()
}
