package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/heartbeat"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	ws := view.Workers(s.store.Workers())
	for i := range ws {
		s.withLastHeartbeat(&ws[i])
	}
	writeJSON(w, http.StatusOK, api.WorkerList{Workers: ws})
	return nil
}

func (s *Server) getWorker(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	wk, err := s.store.Worker(r.PathValue("id"))
	if err != nil {
		return err
	}
	v := view.Worker(wk)
	s.withLastHeartbeat(&v)
	writeJSON(w, http.StatusOK, api.WorkerResponse{Worker: v})
	return nil
}

// withLastHeartbeat fills in when the leader last heard from the worker
// (reads are served by the leader; empty before its first heartbeat to
// this leader).
func (s *Server) withLastHeartbeat(w *api.Worker) {
	if t, ok := s.leases.LastSeen(w.WorkerID); ok {
		w.LastHeartbeat = api.FormatTime(t)
	}
}

func validateRegister(req *api.RegisterRequest) error {
	if req.WorkerID != "" {
		if err := validateID("worker_id", req.WorkerID); err != nil {
			return err
		}
	}
	if err := checkLen("instance_id", req.InstanceID, api.MaxInstanceIDBytes); err != nil {
		return err
	}
	if err := validateLabelMap(req.Labels); err != nil {
		return err
	}
	return validateInventory(req.Capabilities, req.Executors, req.Devices)
}

// register creates a worker with a join token, or, for origin provider,
// with an instance token bound to the same instance_id. Whether the token
// is still usable (revoked, expired, used up) is decided again inside the
// state machine, atomically with the registration, so two registrations
// racing for the last use of a token cannot both win.
func (s *Server) register(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.RegisterRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return err
	}
	if err := validateRegister(&req); err != nil {
		return err
	}
	req.Devices = verifyDevices(req.Devices)
	switch {
	case req.Origin != "" && req.Origin != api.OriginProvider:
		return invalidf("origin must be empty or %q", api.OriginProvider)
	case p.Kind == auth.KindJoin && req.Origin == api.OriginProvider:
		return newError(api.CodeForbidden, "workers with origin provider must register with an instance token, not a join token")
	case p.Kind == auth.KindJoin && req.InstanceID != "":
		return invalidf("instance_id is only for origin provider")
	case p.Kind == auth.KindInstance && req.Origin != api.OriginProvider:
		return newError(api.CodeForbidden, "an instance token registers only a worker with origin %q", api.OriginProvider)
	case p.Kind == auth.KindInstance && req.InstanceID == "":
		return invalidf("instance_id is required with origin provider")
	case p.Kind == auth.KindInstance && req.InstanceID != p.InstanceID:
		// Refused before proposing, so the token is not consumed.
		return newError(api.CodeForbidden, "this instance token is bound to another instance_id")
	}
	id := req.WorkerID
	if id == "" {
		id = "w" + auth.NewID(8)
	}
	if _, err := s.store.Worker(id); err == nil {
		// Known to this replica: answered without a Raft entry.
		existingWorker(w, id)
		return nil
	}
	minted, err := auth.Mint(api.PrefixWorker)
	if err != nil {
		return err
	}
	now := s.now()
	out, err := state.Propose[state.RegisterOutcome](r.Context(), s.propose, command.RegisterWorker{
		WorkerID:     id,
		Credential:   command.CredentialRecord{ID: minted.Token.ID, Kind: string(auth.KindWorker), Name: id, Hash: minted.Hash, CreatedAt: now},
		RegisteredBy: p.Name,
		Labels:       req.Labels,
		Capabilities: req.Capabilities,
		Executors:    req.Executors,
		Devices:      translate.DevicesFromAPI(req.Devices),
		Now:          now,
		TokenID:      p.CredentialID,
		Origin:       req.Origin,
		InstanceID:   req.InstanceID,
		Source:       sourceString(r),
	})
	if err != nil {
		return err
	}
	if !out.Created {
		existingWorker(w, id)
		return nil
	}
	wk := view.Worker(out.Worker)
	s.log.Info("worker registered", "worker_id", id, "registered_by", p.Name, "status", wk.Status)
	writeJSON(w, http.StatusCreated, api.RegisterResponse{WorkerID: id, WorkerToken: minted.Token.String(), Status: wk.Status, Worker: &wk})
	return nil
}

// existingWorker answers a registration under an id that is taken: 200,
// as the contract keeps register idempotent (an agent that lost its
// credential learns to ask for a reissue), with the id the caller sent and
// nothing else. A join token is shared by many machines, so its holder is
// not that worker: the record (labels, devices, status, origin) is an
// admin's to read. No use of the token is counted and nothing changes.
func existingWorker(w http.ResponseWriter, id string) {
	writeJSON(w, http.StatusOK, existingWorkerAnswer{WorkerID: id})
}

// existingWorkerAnswer is the whole answer to registering a taken id.
type existingWorkerAnswer struct {
	WorkerID string `json:"worker_id"`
}

func (s *Server) workerSelf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	wk, err := s.store.Worker(p.WorkerID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.Worker(wk))
	return nil
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.HeartbeatRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return err
	}
	if err := checkStrings("running_task_ids", req.RunningTaskIDs, api.MaxRunningTasks, api.MaxTaskIDBytes); err != nil {
		return err
	}
	if err := validateInventory(nil, req.Executors, req.Devices); err != nil {
		return err
	}
	if req.MaxTasks < 0 || req.MaxTasks > api.MaxRunningTasks {
		return invalidf("max_tasks must be between 0 and %d", api.MaxRunningTasks)
	}
	req.Devices = verifyDevices(req.Devices, s.store.AdmittedModels(p.WorkerID)...)
	if !s.cluster.IsLeader() {
		return errNotLeader
	}
	beat := heartbeat.Handler{Store: s.store, Propose: s.propose, Leases: s.leases}
	a, err := beat.Beat(r.Context(), heartbeat.Beat{WorkerID: p.WorkerID, Executors: req.Executors, Devices: translate.DevicesFromAPI(req.Devices),
		MaxTasks: req.MaxTasks, Running: req.RunningTaskIDs, Now: s.now()})
	if err != nil {
		return err
	}
	answer := view.HeartbeatAnswer(a, s.leases.HeartbeatInterval())
	answer.ExecSessions = s.execs.Offers(p.WorkerID)
	writeJSON(w, http.StatusOK, answer)
	return nil
}

func (s *Server) acquire(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.AcquireRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return err
	}
	switch {
	case req.WaitSeconds < 0 || req.WaitSeconds > api.MaxWaitSeconds:
		return invalidf("wait_seconds must be between 0 and %d", api.MaxWaitSeconds)
	case req.MaxLeaseSeconds < 0 || req.MaxLeaseSeconds > maxLeaseSeconds:
		return invalidf("max_lease_seconds must be between 0 and %d", maxLeaseSeconds)
	case req.MaxTasks < 0 || req.MaxTasks > api.MaxAcquireTasks:
		return invalidf("max_tasks must be between 0 and %d", api.MaxAcquireTasks)
	case len(req.Capability) > api.MaxCapabilityBytes:
		return invalidf("capability: %d bytes, at most %d", len(req.Capability), api.MaxCapabilityBytes)
	}
	if err := checkLen("request_id", req.RequestID, api.MaxKeyBytes); err != nil {
		return err
	}
	if !s.cluster.IsLeader() {
		return errNotLeader
	}
	// The status alone: the worker's whole record (its devices checked
	// against their approved identities, its groups) cost 3 % of the
	// leader's CPU in S1, on every acquire.
	wk, ok := s.store.WorkerAuthInfo(p.WorkerID)
	if !ok {
		return fmt.Errorf("worker %s: %w", p.WorkerID, state.ErrNotFound)
	}
	switch wk.Status {
	case api.WorkerDraining:
		writeJSON(w, http.StatusOK, api.AcquireResponse{Command: api.CommandDrain})
		return nil
	case api.WorkerStopping:
		writeJSON(w, http.StatusOK, api.AcquireResponse{Command: api.CommandStop})
		return nil
	}
	if req.WaitSeconds > 0 {
		release, err := s.polls.enter(p.CredentialID)
		if err != nil {
			return err
		}
		defer release()
	}
	got, err := s.sched.Acquire(r.Context(), p.WorkerID, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, acquireAnswer(got, req.MaxTasks))
	return nil
}

// acquireAnswer is acquire's answer: the first task in task, and for a
// call that asked for several, all of them in tasks.
func acquireAnswer(got []api.Assignment, asked int) api.AcquireResponse {
	var out api.AcquireResponse
	if len(got) > 0 {
		out.Task = &got[0]
	}
	if asked > 1 {
		out.Tasks = got
	}
	return out
}
