// Package lease keeps the leader's heartbeat and lease timers in memory.
//
// Heartbeats are not Raft writes: a heartbeat renews, in memory, the leases
// of the tasks its worker holds. Only transitions are proposed: an attempt
// whose lease lapsed is lost, a worker that stopped heartbeating goes
// offline, one that comes back is ready again. When a node gains leadership
// it re-arms every timer from the replicated state with a grace period, so
// a failover never expires a lease whose worker kept heartbeating; a
// leader that finds its own timers stalled (the process paused, or starved
// of CPU, for longer than a heartbeat interval) gives them the same fresh
// grace: time without a working leader is not counted against a lease.
package lease

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// State is what the manager reads from the replicated state.
type State interface {
	AllActive() []state.ActiveTask
	ActiveTasks(workerID string) []state.ActiveTask
	HeldAttempt(taskID, workerID string) (string, bool)
	Workers() []state.WorkerRecord
}

// Config tunes the manager.
type Config struct {
	Clock   clock.Clock
	State   State
	Propose state.Proposer
	Logger  *slog.Logger
	// Grace is added to every lease and heartbeat deadline re-armed on
	// gaining leadership.
	Grace time.Duration
	// Tick is how often deadlines are checked.
	Tick time.Duration
	// HeartbeatInterval is what workers are told to use.
	HeartbeatInterval time.Duration
	// OfflineAfter is how long without a heartbeat makes a worker offline.
	OfflineAfter time.Duration
}

// Manager holds the timers. It is active only while Run runs (on the
// leader); its methods are safe for concurrent use.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	running bool
	leases  map[string]*entry // by attempt id
	// offline is, by worker, when it goes offline unless a heartbeat
	// comes first.
	offline map[string]time.Time
	// heard is, by worker, its last heartbeat to this leader; none
	// before its first since this leader took office.
	heard map[string]time.Time
	// fresh is when the timers last got a fresh grace: leadership taken,
	// or a stall over (resume).
	fresh time.Time
}

type entry struct {
	taskID   string
	workerID string
	lease    time.Duration
	deadline time.Time
}

// New returns a manager; call Run on gaining leadership.
func New(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Grace == 0 {
		cfg.Grace = 10 * time.Second
	}
	if cfg.Tick == 0 {
		cfg.Tick = 250 * time.Millisecond
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = 2 * time.Second
	}
	if cfg.OfflineAfter == 0 {
		cfg.OfflineAfter = 5 * cfg.HeartbeatInterval
	}
	return &Manager{cfg: cfg, leases: map[string]*entry{}, offline: map[string]time.Time{}, heard: map[string]time.Time{}}
}

// Run re-arms every timer from state and enforces deadlines until ctx ends
// (leadership lost or shutdown).
func (m *Manager) Run(ctx context.Context) error {
	m.rearm()
	t := m.cfg.Clock.NewTicker(m.cfg.Tick)
	defer t.Stop()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.leases = map[string]*entry{}
		m.offline = map[string]time.Time{}
		m.heard = map[string]time.Time{}
		m.mu.Unlock()
	}()
	now := m.cfg.Clock.Now()
	r := runState{lastTick: now, lastAdopt: now}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			m.tick(ctx, &r)
		}
	}
}

// runState is what Run carries from one tick to the next.
type runState struct {
	// lastTick is when the previous tick's work ended; lastAdopt when
	// the state was last searched for unarmed attempts.
	lastTick, lastAdopt time.Time
}

// tick is one turn of Run: it gives every timer a fresh grace if the
// timers stalled since the last turn, adopts unarmed attempts now and
// then, and enforces the deadlines.
func (m *Manager) tick(ctx context.Context, r *runState) {
	now := m.cfg.Clock.Now()
	if now.Sub(r.lastTick) > m.stallAfter() {
		m.resume(now)
	}
	if now.Sub(r.lastAdopt) >= adoptEvery {
		m.adopt(now)
		r.lastAdopt = now
	}
	m.enforce(ctx)
	// Measured from the end of this turn, so that a slow proposal here
	// (a busy log) is not taken for a stall.
	r.lastTick = m.cfg.Clock.Now()
}

// stallAfter is how long the timers may go unchecked before the manager
// takes it that it was not running (its process paused or starved):
// longer than a heartbeat interval, every worker's heartbeat could have
// gone unheard for want of a leader, not for want of the worker.
func (m *Manager) stallAfter() time.Duration {
	return max(m.cfg.HeartbeatInterval, 4*m.cfg.Tick)
}

// resume gives every timer a fresh grace after a stall, as gaining
// leadership does (rearm), keeping any later deadline: nothing is
// declared lost for time the leader did not run. What it heard before the
// stall stays heard.
func (m *Manager) resume(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return
	}
	m.cfg.Logger.Warn("lease timers stalled; every lease and heartbeat deadline gets a fresh grace", "grace", m.cfg.Grace)
	m.fresh = now
	for _, e := range m.leases {
		if d := now.Add(e.lease + m.cfg.Grace); d.After(e.deadline) {
			e.deadline = d
		}
	}
	for w, at := range m.offline {
		if d := now.Add(m.cfg.Grace + m.cfg.OfflineAfter); d.After(at) {
			m.offline[w] = d
		}
	}
}

// adoptEvery is how often the state is searched for attempts no lease
// covers.
const adoptEvery = time.Second

// adopt arms a lease for every active attempt in the state that has none:
// one whose assignment committed after the acquire that proposed it had
// gone (its answer lost, so Assigned never ran, and its worker, never
// told, does not report it). Its deadline is the state's, plus the grace:
// such an attempt lapses as any unreported one does, instead of staying
// assigned until the next election. It is never earlier than what rearm
// would have given it at the last fresh start (leadership taken, stall
// over): a deadline the state set before an outage, long past when the
// attempt is adopted, does not make the attempt lapse before its worker
// has had a grace to report it.
func (m *Manager) adopt(now time.Time) {
	active := m.cfg.State.AllActive()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return
	}
	for _, a := range active {
		if _, ok := m.leases[a.AttemptID]; ok {
			continue
		}
		lease := time.Duration(a.LeaseSeconds) * time.Second
		deadline := a.LeaseExpiresAt.Add(m.cfg.Grace)
		if floor := m.fresh.Add(lease + m.cfg.Grace); deadline.Before(floor) {
			deadline = floor
		}
		m.leases[a.AttemptID] = &entry{taskID: a.TaskID, workerID: a.WorkerID, lease: lease, deadline: deadline}
		m.cfg.Logger.Debug("adopted an attempt no lease covered", "task_id", a.TaskID, "attempt_id", a.AttemptID, "worker_id", a.WorkerID, "deadline", deadline, "now", now)
	}
}

// rearm starts the timers on gaining leadership: every active attempt's
// lease and every ready worker's heartbeat deadline run from now, plus
// the grace. No worker counts as heard from (LastSeen) until it
// heartbeats to this leader.
func (m *Manager) rearm() {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = true
	m.fresh = now
	m.leases = map[string]*entry{}
	m.offline = map[string]time.Time{}
	m.heard = map[string]time.Time{}
	for _, a := range m.cfg.State.AllActive() {
		lease := time.Duration(a.LeaseSeconds) * time.Second
		m.leases[a.AttemptID] = &entry{taskID: a.TaskID, workerID: a.WorkerID, lease: lease, deadline: now.Add(lease + m.cfg.Grace)}
	}
	for _, w := range m.cfg.State.Workers() {
		if w.Worker.Status == api.WorkerReady {
			m.offline[w.Worker.ID] = now.Add(m.cfg.Grace + m.cfg.OfflineAfter)
		}
	}
}

// Assigned arms the lease of a new attempt, or of one answered again to a
// retried acquire (keeping the later deadline).
func (m *Manager) Assigned(taskID, workerID, attemptID string, lease time.Duration, deadline time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return
	}
	if e, ok := m.leases[attemptID]; ok && e.deadline.After(deadline) {
		return // a replayed assignment: heartbeats have renewed it since
	}
	m.leases[attemptID] = &entry{taskID: taskID, workerID: workerID, lease: lease, deadline: deadline}
}

// Ended forgets the lease of an attempt that ended (a finish or a fail
// the state accepted), so that the leader holds no timer for it until
// it would have lapsed. A lease it does not hold (a follower answered
// the finish) lapses as before and is dropped when the state says the
// attempt is no longer held.
func (m *Manager) Ended(attemptID string) { m.drop(attemptID) }

// Heartbeat records a worker's heartbeat and renews the leases of the tasks
// it holds and reports running. A task the worker holds but does not report
// (an assignment whose answer never reached it, a task it lost track of)
// is not renewed: its lease lapses and the task is handed out again. It
// returns the earliest renewed deadline (zero if none).
func (m *Manager) Heartbeat(workerID string, running []string) time.Time {
	now := m.cfg.Clock.Now()
	held := m.cfg.State.ActiveTasks(workerID)
	reported := make(map[string]bool, len(running))
	for _, id := range running {
		reported[id] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.heard[workerID] = now
	m.offline[workerID] = now.Add(m.cfg.OfflineAfter)
	var earliest time.Time
	for _, a := range held {
		if !reported[a.TaskID] {
			continue
		}
		lease := time.Duration(a.LeaseSeconds) * time.Second
		d := now.Add(lease)
		e, ok := m.leases[a.AttemptID]
		if !ok {
			e = &entry{taskID: a.TaskID, workerID: workerID, lease: lease}
			if m.running {
				m.leases[a.AttemptID] = e
			}
		}
		if d.After(e.deadline) {
			e.deadline = d
		}
		if earliest.IsZero() || e.deadline.Before(earliest) {
			earliest = e.deadline
		}
	}
	return earliest
}

// LastSeen returns when this leader last had a heartbeat from a worker
// (false before its first one since the leader took office: the grace a
// new leader gives a worker's heartbeat deadline is not a heartbeat).
func (m *Manager) LastSeen(workerID string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.heard[workerID]
	return t, ok
}

// Deadline returns an attempt's current lease deadline.
func (m *Manager) Deadline(attemptID string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.leases[attemptID]
	if !ok {
		return time.Time{}, false
	}
	return e.deadline, true
}

// HeartbeatInterval is the interval workers are told to use.
func (m *Manager) HeartbeatInterval() time.Duration { return m.cfg.HeartbeatInterval }

type lapse struct {
	attemptID string
	e         entry
}

func (m *Manager) enforce(ctx context.Context) {
	now := m.cfg.Clock.Now()
	var lapsed []lapse
	var gone []string
	m.mu.Lock()
	for id, e := range m.leases {
		if now.After(e.deadline) {
			lapsed = append(lapsed, lapse{id, *e})
		}
	}
	for w, at := range m.offline {
		if now.After(at) {
			gone = append(gone, w)
		}
	}
	m.mu.Unlock()

	for _, l := range lapsed {
		if held, ok := m.cfg.State.HeldAttempt(l.e.taskID, l.e.workerID); !ok || held != l.attemptID {
			m.drop(l.attemptID)
			continue
		}
		res, err := m.cfg.Propose(ctx, command.LoseAttempt{TaskID: l.e.taskID, AttemptID: l.attemptID, Reason: "lease expired on worker " + l.e.workerID, Now: now})
		if err != nil {
			m.cfg.Logger.Warn("propose lost attempt", "task_id", l.e.taskID, "error", err)
			continue
		}
		if res.Err() == nil {
			m.cfg.Logger.Info("lease expired; attempt lost", "task_id", l.e.taskID, "attempt_id", l.attemptID, "worker_id", l.e.workerID)
		}
		m.drop(l.attemptID)
	}
	for _, w := range gone {
		res, err := m.cfg.Propose(ctx, command.SetWorkerStatus{WorkerID: w, Status: api.WorkerOffline, Now: now})
		if err != nil {
			continue
		}
		if res.Err() == nil {
			m.cfg.Logger.Info("worker offline: no heartbeat", "worker_id", w)
		} else if !errors.Is(res.Err(), state.ErrConflict) {
			m.cfg.Logger.Debug("offline transition refused", "worker_id", w, "error", res.Err())
		}
		m.mu.Lock()
		if at, ok := m.offline[w]; ok && now.After(at) {
			delete(m.offline, w)
		}
		m.mu.Unlock()
	}
}

func (m *Manager) drop(attemptID string) {
	m.mu.Lock()
	delete(m.leases, attemptID)
	m.mu.Unlock()
}
