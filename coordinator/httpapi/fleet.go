package httpapi

import (
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fleet control: an admin drains, stops or resumes a worker; a worker
// drains, resumes or deregisters itself. Each answers {worker} as the
// state machine left it (a deregistered worker that held nothing is
// already forgotten: the answer is its last record).

func (s *Server) drainWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, r.PathValue("id"), command.ActionDrain, false)
}

func (s *Server) stopWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, r.PathValue("id"), command.ActionStop, false)
}

func (s *Server) resumeWorker(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, r.PathValue("id"), command.ActionResume, false)
}

func (s *Server) drainSelf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, p.WorkerID, command.ActionDrain, true)
}

func (s *Server) resumeSelf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, p.WorkerID, command.ActionResume, true)
}

func (s *Server) deregisterSelf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.controlWorker(w, r, p, p.WorkerID, command.ActionDeregister, true)
}

// controlWorker decodes the action's body (a deadline for a drain or a
// deregister, nothing otherwise), proposes it and answers the worker.
func (s *Server) controlWorker(w http.ResponseWriter, r *http.Request, p auth.Principal, id, action string, self bool) error {
	if err := validateID("worker id", id); err != nil {
		return err
	}
	now := s.now()
	c := command.ControlWorker{WorkerID: id, Action: action, Self: self, By: p.Name, Source: sourceString(r), Now: now}
	switch action {
	case command.ActionDrain, command.ActionDeregister:
		deadline, err := decodeDrain(r)
		if err != nil {
			return err
		}
		c.Deadline = now.Add(deadline)
	default:
		if err := emptyBody(r); err != nil {
			return err
		}
	}
	return s.proposeWorkerWrite(w, r, c, "worker "+action, "worker_id", id, "by", p.Name, "deadline", c.Deadline)
}

// decodeDrain reads a drain's body: its deadline, the default when absent.
func decodeDrain(r *http.Request) (time.Duration, error) {
	var req api.DrainRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return 0, err
	}
	secs := api.DefaultDrainDeadlineSeconds
	if req.DeadlineSeconds != nil {
		secs = *req.DeadlineSeconds
	}
	if secs < 0 || secs > api.MaxDrainDeadlineSeconds {
		return 0, invalidf("deadline_seconds must be between 0 and %d", api.MaxDrainDeadlineSeconds)
	}
	return time.Duration(secs) * time.Second, nil
}

// clearGPU asks a worker's agent to take a GPU out of fault or
// quarantine; the answer is the worker, with the GPU in clear_gpus until
// its agent reports it back.
func (s *Server) clearGPU(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, uuid, err := workerDevice(r) // cordon.go
	if err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.ClearGPU{WorkerID: id, UUID: uuid, By: p.Name, Source: sourceString(r), Now: s.now()}, "GPU clear requested", "worker_id", id, "uuid", uuid, "by", p.Name)
}
