// Package lease keeps the leader's heartbeat and lease timers in memory.
//
// Heartbeats are not Raft writes: a heartbeat renews, in memory, the leases
// of the tasks its worker holds. Only transitions are proposed: an attempt
// whose lease lapsed is lost, a worker that stopped heartbeating goes
// offline, one that comes back is ready again. When a node gains leadership
// it re-arms every timer from the replicated state with a grace period, so
// a failover never expires a lease whose worker kept heartbeating.
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

	mu       sync.Mutex
	running  bool
	leases   map[string]*entry // by attempt id
	lastSeen map[string]time.Time
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
	return &Manager{cfg: cfg, leases: map[string]*entry{}, lastSeen: map[string]time.Time{}}
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
		m.lastSeen = map[string]time.Time{}
		m.mu.Unlock()
	}()
	lastAdopt := m.cfg.Clock.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			if now := m.cfg.Clock.Now(); now.Sub(lastAdopt) >= adoptEvery {
				m.adopt(now)
				lastAdopt = now
			}
			m.enforce(ctx)
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
// assigned until the next election.
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
		deadline := a.LeaseExpiresAt.Add(m.cfg.Grace)
		if deadline.Before(now) {
			deadline = now
		}
		m.leases[a.AttemptID] = &entry{taskID: a.TaskID, workerID: a.WorkerID, lease: time.Duration(a.LeaseSeconds) * time.Second, deadline: deadline}
	}
}

func (m *Manager) rearm() {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = true
	m.leases = map[string]*entry{}
	m.lastSeen = map[string]time.Time{}
	for _, a := range m.cfg.State.AllActive() {
		lease := time.Duration(a.LeaseSeconds) * time.Second
		m.leases[a.AttemptID] = &entry{taskID: a.TaskID, workerID: a.WorkerID, lease: lease, deadline: now.Add(lease + m.cfg.Grace)}
	}
	for _, w := range m.cfg.State.Workers() {
		if w.Worker.Status == api.WorkerReady {
			m.lastSeen[w.Worker.ID] = now.Add(m.cfg.Grace)
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
	m.lastSeen[workerID] = now
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
// (false before its first one since the leader took office).
func (m *Manager) LastSeen(workerID string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lastSeen[workerID]
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
	for w, seen := range m.lastSeen {
		if now.Sub(seen) > m.cfg.OfflineAfter {
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
		if seen, ok := m.lastSeen[w]; ok && now.Sub(seen) > m.cfg.OfflineAfter {
			delete(m.lastSeen, w)
		}
		m.mu.Unlock()
	}
}

func (m *Manager) drop(attemptID string) {
	m.mu.Lock()
	delete(m.leases, attemptID)
	m.mu.Unlock()
}
