package state

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// RegisterOutcome is the value of a RegisterWorker result.
type RegisterOutcome struct {
	Created bool
	Worker  api.Worker
}

func (s *Store) registerWorker(c command.RegisterWorker) Result {
	if w, ok := s.workers[c.WorkerID]; ok {
		return Result{Value: RegisterOutcome{Created: false, Worker: s.workerView(w)}}
	}
	if c.Credential.ID == "" || c.Credential.Hash == "" {
		return Result{Err: fmt.Errorf("%w: register without credential", ErrInvalid)}
	}
	if _, dup := s.credentials[c.Credential.ID]; dup {
		return Result{Err: fmt.Errorf("credential id collision: %w", ErrConflict)}
	}
	w := &Worker{
		ID:           c.WorkerID,
		Status:       api.WorkerReady,
		Labels:       c.Labels,
		Capabilities: c.Capabilities,
		Executors:    c.Executors,
		Devices:      c.Devices,
		CredentialID: c.Credential.ID,
		RegisteredAt: c.Now,
		RegisteredBy: c.RegisteredBy,
		active:       map[string]struct{}{},
	}
	cred := c.Credential
	cred.WorkerID = c.WorkerID
	s.credentials[cred.ID] = &Credential{CredentialRecord: cred}
	s.workers[w.ID] = w
	s.markPending()
	return Result{Value: RegisterOutcome{Created: true, Worker: s.workerView(w)}}
}

func (s *Store) updateWorker(c command.UpdateWorker) Result {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return Result{Err: fmt.Errorf("worker %s: %w", c.WorkerID, ErrWorkerNotRegistered)}
	}
	w.Executors = c.Executors
	w.Devices = c.Devices
	s.markPending()
	return Result{Value: s.workerView(w)}
}

func (s *Store) setWorkerStatus(c command.SetWorkerStatus) Result {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return Result{Err: fmt.Errorf("worker %s: %w", c.WorkerID, ErrWorkerNotRegistered)}
	}
	switch c.Status {
	case api.WorkerReady, api.WorkerOffline:
	default:
		return Result{Err: fmt.Errorf("%w: status %q", ErrInvalid, c.Status)}
	}
	// Only ready and offline move between each other here; revoked,
	// pending and the commands keep their meaning.
	if w.Status != api.WorkerReady && w.Status != api.WorkerOffline {
		return Result{Err: fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, ErrConflict)}
	}
	if c.Status == api.WorkerReady && w.Status != api.WorkerReady {
		s.markPending()
	}
	w.Status = c.Status
	return Result{Value: s.workerView(w)}
}

// Worker returns the view of a worker.
func (s *Store) Worker(id string) (api.Worker, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[id]
	if !ok {
		return api.Worker{}, fmt.Errorf("worker %s: %w", id, ErrNotFound)
	}
	return s.workerView(w), nil
}

// Workers lists every worker, by id.
func (s *Store) Workers() []api.Worker {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]api.Worker, 0, len(s.workers))
	for _, w := range s.workers {
		out = append(out, s.workerView(w))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].WorkerID < out[j].WorkerID })
	return out
}

// WorkerCredentialID returns the id of the worker's live credential.
func (s *Store) WorkerCredentialID(id string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[id]
	if !ok {
		return "", false
	}
	return w.CredentialID, true
}

// ActiveTasks returns the worker's active tasks: id → (attempt id, lease
// seconds, cancel requested).
func (s *Store) ActiveTasks(workerID string) []ActiveTask {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok {
		return nil
	}
	out := make([]ActiveTask, 0, len(w.active))
	for id := range w.active {
		t := s.tasks[id]
		out = append(out, ActiveTask{TaskID: id, AttemptID: t.AttemptID, WorkerID: workerID, LeaseSeconds: t.LeaseSeconds, CancelRequested: t.CancelRequested, LeaseExpiresAt: t.LeaseExpiresAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskID < out[j].TaskID })
	return out
}

func (s *Store) workerView(w *Worker) api.Worker {
	running := make([]string, 0, len(w.active))
	for id := range w.active {
		running = append(running, id)
	}
	sort.Strings(running)
	return api.Worker{
		WorkerID:     w.ID,
		Status:       w.Status,
		Labels:       w.Labels,
		Capabilities: nonNil(w.Capabilities),
		Executors:    nonNil(w.Executors),
		Devices:      slices.Clone(nonNilDevices(w.Devices)),
		RunningTasks: running,
		RegisteredAt: api.FormatTime(w.RegisteredAt),
		RegisteredBy: w.RegisteredBy,
		Groups:       s.groupsOf(w.ID),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func nonNilDevices(d []api.Device) []api.Device {
	if d == nil {
		return []api.Device{}
	}
	return d
}
