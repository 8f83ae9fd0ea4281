package state

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
)

// RegisterOutcome is the outcome of RegisterWorker and EnrollWorker: the
// worker, and whether this command created it (else it existed).
type RegisterOutcome struct {
	Created bool
	Worker  WorkerRecord
}

func (s *Store) registerWorker(c command.RegisterWorker) (RegisterOutcome, error) {
	if w, ok := s.workers[c.WorkerID]; ok {
		return RegisterOutcome{Created: false, Worker: s.workerRecord(w)}, nil
	}
	if c.Credential.ID == "" || c.Credential.Hash == "" {
		return RegisterOutcome{}, fmt.Errorf("%w: register without credential", ErrInvalid)
	}
	if s.credentials.Has(c.Credential.ID) {
		return RegisterOutcome{}, fmt.Errorf("credential id collision: %w", ErrConflict)
	}
	status := workerReady
	labels := c.Labels
	var token *creds.Credential
	if c.TokenID != "" {
		if cred, ok := s.credentials.Get(c.TokenID); ok {
			if d, pinned := outsideModels(c.Devices, cred.GPUModels); pinned {
				return RegisterOutcome{}, fmt.Errorf("join token %s admits GPU models %s, and this worker reports %q: %w", cred.ID, strings.Join(cred.GPUModels, ", "), d.Name, ErrForbidden)
			}
		}
		var err error
		if token, err = s.credentials.Redeem(c.TokenID, c.Origin == originProvider, c.InstanceID, c.Now); err != nil {
			return RegisterOutcome{}, err
		}
		if token.RequiresApproval {
			status = workerPending
		}
		labels = mergeLabels(c.Labels, token.Labels)
	}
	origin := c.Origin
	if origin == "" && c.TokenID != "" {
		origin = originJoin
	}
	w := &Worker{
		ID:           c.WorkerID,
		Status:       status,
		Labels:       labels,
		Capabilities: c.Capabilities,
		Executors:    c.Executors,
		Devices:      c.Devices,
		// What a worker registers with is its approved inventory.
		ApprovedDevices:  fit.Inventory(c.Devices),
		ApprovedIdentity: fit.Identities(c.Devices),
		CredentialID:     c.Credential.ID,
		RegisteredAt:     c.Now,
		RegisteredBy:     c.RegisteredBy,
		Origin:           origin,
		InstanceID:       c.InstanceID,
		TokenID:          c.TokenID,
	}
	cred := c.Credential
	cred.WorkerID = c.WorkerID
	s.credentials.Put(cred)
	s.putWorker(w) // gangtopology_index.go
	detail := "status " + status
	if token != nil {
		joined, missing := s.groups.Join(w.ID, token.Groups, c.Now) // a group deleted since the token was made is reported missing
		if len(joined) > 0 {
			detail += ", groups " + strings.Join(joined, ",")
		}
		if len(missing) > 0 {
			detail += ", groups no longer present " + strings.Join(missing, ",")
		}
	}
	ev := command.AuditEvent{Time: c.Now, Kind: "worker.registered", Actor: c.RegisteredBy, WorkerID: w.ID, Subject: cred.ID, CredentialKind: creds.KindWorker, Source: c.Source, Detail: detail}
	if token != nil {
		ev.CredentialID, ev.CredentialKind = token.ID, token.Kind
	}
	s.audit.Record(ev)
	if status == workerReady {
		s.markPending()
	}
	return RegisterOutcome{Created: true, Worker: s.workerRecord(w)}, nil
}

// mergeLabels lays the token's labels over the worker's own: labels an
// admin put on a join token are not the worker's to change.
func mergeLabels(own, token map[string]string) map[string]string {
	if len(token) == 0 {
		return own
	}
	out := make(map[string]string, len(own)+len(token))
	for k, v := range own {
		out[k] = v
	}
	for k, v := range token {
		out[k] = v
	}
	return out
}

// approveWorker moves a pending worker to ready. Approving a worker that
// is not pending changes nothing; a revoked worker cannot be approved.
func (s *Store) approveWorker(c command.ApproveWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrNotFound)
	}
	switch w.Status {
	case workerRevoked:
		return WorkerRecord{}, fmt.Errorf("worker %s is revoked: %w", w.ID, ErrConflict)
	case workerPending:
	default:
		return s.workerRecord(w), nil
	}
	w.Status = workerReady
	w.ApprovedBy, w.ApprovedAt = c.By, c.Now
	s.audit.Record(command.AuditEvent{Time: c.Now, Kind: "worker.approved", Actor: c.By, WorkerID: w.ID, Subject: w.ID, Source: c.Source})
	s.markPending()
	return s.workerRecord(w), nil
}

func (s *Store) updateWorker(c command.UpdateWorker) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrWorkerNotRegistered)
	}
	if c.AuditDevices {
		gpuops.AuditDevices(roomEffects{s}, w, c.Devices, c.Now)
	}
	gpuops.ApproveLegacy(w) // state from before approvals were kept
	w.Executors = c.Executors
	w.Devices = c.Devices
	if c.MaxTasks > 0 {
		w.MaxTasks = c.MaxTasks
	}
	gpuops.SettleClears(roomEffects{s}, w, c.Now)
	gpuops.SettleMIGLayouts(roomEffects{s}, w, c.Now)
	s.markPending()
	return s.workerRecord(w), nil
}

func (s *Store) setWorkerStatus(c command.SetWorkerStatus) (WorkerRecord, error) {
	w, ok := s.workers[c.WorkerID]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", c.WorkerID, ErrWorkerNotRegistered)
	}
	switch c.Status {
	case workerReady, workerOffline:
	default:
		return WorkerRecord{}, fmt.Errorf("%w: status %q", ErrInvalid, c.Status)
	}
	// Only ready and offline move between each other here; revoked,
	// pending and the commands keep their meaning.
	if w.Status != workerReady && w.Status != workerOffline {
		return WorkerRecord{}, fmt.Errorf("worker %s is %s: %w", w.ID, w.Status, ErrConflict)
	}
	if c.Status == workerReady && w.Status != workerReady {
		s.markPending()
	}
	w.Status = c.Status
	return s.workerRecord(w), nil
}

// Worker returns a copy of a worker.
func (s *Store) Worker(id string) (WorkerRecord, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[id]
	if !ok {
		return WorkerRecord{}, fmt.Errorf("worker %s: %w", id, ErrNotFound)
	}
	return s.workerRecord(w), nil
}

// Workers lists every worker, by id.
func (s *Store) Workers() []WorkerRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]WorkerRecord, 0, len(s.workers))
	for _, w := range s.workers {
		out = append(out, s.workerRecord(w))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Worker.ID < out[j].Worker.ID })
	return out
}

// WorkerAuth is what authentication needs to know about a worker.
type WorkerAuth struct {
	ID           string
	Status       string
	CredentialID string
	ClusterKey   string
}

// WorkerAuthInfo reads the few fields authentication checks on every
// worker request, without copying the worker's full record (its devices,
// labels and task list: measurable on the heartbeat path).
func (s *Store) WorkerAuthInfo(id string) (WorkerAuth, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[id]
	if !ok {
		return WorkerAuth{}, false
	}
	return WorkerAuth{ID: w.ID, Status: w.Status, CredentialID: w.CredentialID, ClusterKey: w.ClusterKey}, true
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
	out := make([]ActiveTask, 0, w.HeldCount())
	for id := range w.Held() {
		t := s.tasks.Get(id)
		out = append(out, ActiveTask{TaskID: id, AttemptID: t.AttemptID, WorkerID: workerID, LeaseSeconds: t.LeaseSeconds, CancelRequested: t.CancelRequested, Preempted: t.Preempt != "", ForTask: preemptedForTask(t), LeaseExpiresAt: t.LeaseExpiresAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TaskID < out[j].TaskID })
	return out
}

// outsideModels returns a device whose model is not among models (any
// case), if models pins any and one is not.
func outsideModels(devs []command.Device, models []string) (command.Device, bool) {
	if len(models) == 0 {
		return command.Device{}, false
	}
	for _, d := range devs {
		if d.Parent != "" {
			continue // a MIG device is its GPU's model, checked as that GPU
		}
		if !slices.ContainsFunc(models, func(m string) bool { return strings.EqualFold(strings.TrimSpace(m), strings.TrimSpace(d.Name)) }) {
			return d, true
		}
	}
	return command.Device{}, false
}

// AdmittedModels are the GPU models the join token a worker registered
// with pins (nil: any).
func (s *Store) AdmittedModels(workerID string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w, ok := s.workers[workerID]
	if !ok || w.TokenID == "" {
		return nil
	}
	if cred, ok := s.credentials.Get(w.TokenID); ok {
		return slices.Clone(cred.GPUModels)
	}
	return nil
}
