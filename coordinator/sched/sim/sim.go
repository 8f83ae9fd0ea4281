package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// epoch is virtual second 0.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Sim runs one trace.
type Sim struct {
	tr         Trace
	s          *state.Store
	now        int
	workers    []string
	fleetCenti int64
	arrivals   []JobSpec // by arrival, then id
	next       int       // the next arrival
	jobs       map[string]JobSpec
	pending    map[string]waiting // by task id
	running    map[string]run
	n          int
	log        []string
	rep        Report
	// stopping are the victims told to stop, by when they will
	// (preempt.go); ckpt is each task's latest checkpoint it saved.
	stopping map[string]int
	ckpt     map[string]string
	// loopOff skips the preemption loop while its checks still run (a
	// test's way to see them bite).
	loopOff bool
}

// waiting is a pending task: its team and what it will hold.
type waiting struct {
	team  string
	centi int64
}

// run is a running task.
type run struct {
	job     JobSpec
	worker  string
	started int
	ends    int
}

// Report is what a run measured.
type Report struct {
	Placements int
	Steps      int
	// GPUSeconds per team, in hundredths of a GPU times seconds, over
	// the steps when every team had work waiting.
	GPUSeconds map[string]int64
	// Busy and Ideal are hundredths of a GPU times seconds while work
	// waited: held, and the most an ideal packing could hold (the fleet,
	// or all the work running and waiting if less).
	Busy, Ideal int64
	// Passes are the real durations of each acquire (match + apply).
	Passes []time.Duration
	// Digest is a hash of every assignment in order: two runs of one
	// trace agree on it.
	Digest string
	// Preemptions are the preemptions applied; Requeued the attempts they
	// ended (a gang's every member), each placed again later; Restored
	// the placements that were handed a checkpoint to resume from.
	Preemptions, Requeued, Restored int
}

// Utilization is Busy / Ideal (1 when nothing waited).
func (r Report) Utilization() float64 {
	if r.Ideal == 0 {
		return 1
	}
	return float64(r.Busy) / float64(r.Ideal)
}

// New prepares a run of tr.
func New(tr Trace) (*Sim, error) {
	if err := tr.check(); err != nil {
		return nil, err
	}
	sm := &Sim{tr: tr, s: state.New(), jobs: map[string]JobSpec{}, pending: map[string]waiting{}, running: map[string]run{},
		stopping: map[string]int{}, ckpt: map[string]string{}}
	sm.rep.GPUSeconds = map[string]int64{}
	for _, j := range tr.Jobs {
		for r := range max(j.Repeats, 1) {
			c := j
			c.At += r * j.RepeatEvery
			if j.Repeats > 1 {
				c.ID = fmt.Sprintf("%s-%d", j.ID, r)
			}
			sm.arrivals = append(sm.arrivals, c)
		}
	}
	sort.SliceStable(sm.arrivals, func(a, b int) bool { return sm.arrivals[a].At < sm.arrivals[b].At })
	return sm, sm.setup()
}

// Store is the state the run drives.
func (sm *Sim) Store() *state.Store { return sm.s }

func (sm *Sim) at() time.Time { return epoch.Add(time.Duration(sm.now) * time.Second) }

func (sm *Sim) apply(c command.Command) error {
	return sm.s.Apply(c).(state.Result).Err()
}

// Run runs the trace to its end, calling check after every step; it
// stops at the first error check or the state returns.
func (sm *Sim) Run(check func(*Sim) error) (Report, error) {
	for {
		t, ok := sm.nextEvent()
		if !ok || (sm.tr.Horizon > 0 && t > sm.tr.Horizon) {
			break
		}
		sm.account(t)
		sm.now = t
		if err := sm.step(); err != nil {
			return sm.rep, err
		}
		if check != nil {
			if err := check(sm); err != nil {
				return sm.rep, fmt.Errorf("at %ds: %w", sm.now, err)
			}
		}
	}
	h := sha256.Sum256([]byte(fmt.Sprint(sm.log)))
	sm.rep.Digest = hex.EncodeToString(h[:8])
	return sm.rep, nil
}

// nextEvent is the next arrival or end.
func (sm *Sim) nextEvent() (int, bool) {
	t, ok := 0, false
	if sm.next < len(sm.arrivals) {
		t, ok = sm.arrivals[sm.next].At, true
	}
	for _, r := range sm.running {
		if !ok || r.ends < t {
			t, ok = r.ends, true
		}
	}
	if at, due := sm.nextPreemptEvent(); due && (!ok || at < t) {
		t, ok = at, true
	}
	return max(t, sm.now), ok
}

// step ends what is due, submits what arrives and places work.
func (sm *Sim) step() error {
	sm.rep.Steps++
	for _, id := range dueBy(sm.running, func(r run) int { return r.ends }, sm.now) {
		tk, err := sm.s.Task(id)
		if err != nil {
			return err
		}
		if err := sm.apply(command.FinishTask{TaskID: id, WorkerID: tk.WorkerID, AttemptID: tk.AttemptID, Now: sm.at()}); err != nil {
			return err
		}
		delete(sm.running, id)
		delete(sm.stopping, id)
	}
	if err := sm.stopDue(); err != nil {
		return err
	}
	for ; sm.next < len(sm.arrivals) && sm.arrivals[sm.next].At <= sm.now; sm.next++ {
		if err := sm.submit(sm.arrivals[sm.next]); err != nil {
			return err
		}
	}
	if err := sm.preempt(); err != nil {
		return err
	}
	return sm.pass()
}

func (sm *Sim) submit(j JobSpec) error {
	ids := make([]string, j.Count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", j.ID, i)
		sm.pending[ids[i]] = waiting{team: j.Team, centi: taskCenti(j)}
	}
	spec := command.JobSpec{Executor: "sim", Config: []byte(`{}`), Count: j.Count, Resources: resourcesOf(j), Gang: j.Gang,
		Priority: j.Priority, TimeoutSeconds: j.Timeout, MaxAttempts: 1}
	if j.NoPreempt {
		no := false
		spec.Preemptible = &no
	}
	if j.Checkpoint {
		spec.Checkpoint = &command.CheckpointSpec{Path: "ckpt"}
	}
	if j.Grace > 0 {
		spec.PreemptionGraceSeconds = &j.Grace
	}
	sm.jobs[j.ID] = j
	return sm.apply(command.SubmitJob{JobID: j.ID, TaskIDs: ids, Spec: spec, CreatedBy: "sim", Team: j.Team, Now: sm.at()})
}

// pass asks every worker with a free slot for work until none takes
// more, as the agents' acquires would.
func (sm *Sim) pass() error {
	for progress := true; progress && len(sm.pending) > 0; {
		progress = false
		for _, w := range sm.workers {
			placed, err := sm.acquire(w)
			if err != nil {
				return err
			}
			progress = progress || placed
		}
	}
	return nil
}

// acquire matches worker w once and applies what it proposes.
func (sm *Sim) acquire(w string) (bool, error) {
	start := time.Now()
	c, ok, err := sm.s.MatchAt(sm.at(), w, "", 0, nil)
	if err != nil || !ok {
		return false, err
	}
	sm.n++
	members := []command.GangMember{{TaskID: c.TaskID, WorkerID: w, AttemptID: fmt.Sprintf("a%d", sm.n), Devices: c.Devices}}
	if c.Gang != nil {
		tk, _ := sm.s.Task(c.Gang[0].TaskID)
		g := command.AssignGang{JobID: tk.JobID, WorkerID: w, Now: sm.at()}
		for i, m := range c.Gang {
			g.Members = append(g.Members, command.GangMember{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: fmt.Sprintf("a%d-%d", sm.n, i), Devices: m.Devices})
		}
		members = g.Members
		err = sm.apply(g)
	} else {
		err = sm.apply(command.AssignTask{TaskID: c.TaskID, WorkerID: w, AttemptID: members[0].AttemptID, Devices: c.Devices, Now: sm.at()})
	}
	sm.rep.Passes = append(sm.rep.Passes, time.Since(start))
	if err != nil {
		return false, fmt.Errorf("the state refused what the match proposed: %w", err)
	}
	for _, m := range members {
		if err := sm.apply(command.StartTask{TaskID: m.TaskID, WorkerID: m.WorkerID, AttemptID: m.AttemptID, Now: sm.at()}); err != nil {
			return false, err
		}
		tk, _ := sm.s.Task(m.TaskID)
		j := sm.jobs[tk.JobID]
		sm.running[m.TaskID] = run{job: j, worker: m.WorkerID, started: sm.now, ends: sm.now + j.Duration}
		if tk.Checkpoint != nil {
			sm.rep.Restored++
		}
		delete(sm.pending, m.TaskID)
		sm.log = append(sm.log, fmt.Sprintf("%d %s %s %v", sm.now, m.TaskID, m.WorkerID, m.Devices))
		sm.rep.Placements++
	}
	return true, nil
}
