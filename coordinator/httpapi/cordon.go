package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// cordonGPU answers POST /v1/workers/{id}/devices/{uuid}/cordon
// {reason?}: the GPU is given no new task; what runs on it goes on.
func (s *Server) cordonGPU(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.cordonOrDrain(w, r, p, false)
}

// drainGPU answers POST /v1/workers/{id}/devices/{uuid}/drain {reason?}:
// the GPU is cordoned and the tasks on it are stopped and requeued
// without using an attempt (state/gpudrain.go).
func (s *Server) drainGPU(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	return s.cordonOrDrain(w, r, p, true)
}

// cordonOrDrain reads and bounds a cordon's or a drain's worker, GPU and
// optional body {reason?}, and proposes it.
func (s *Server) cordonOrDrain(w http.ResponseWriter, r *http.Request, p auth.Principal, drain bool) error {
	id, uuid, err := workerDevice(r)
	if err != nil {
		return err
	}
	var req api.CordonRequest
	if _, err := decodeRequest(r, &req, true); err != nil {
		return err
	}
	if err := checkLen("reason", req.Reason, api.MaxCordonReasonBytes); err != nil {
		return err
	}
	return s.proposeCordon(w, r, command.CordonDevice{WorkerID: id, UUID: uuid, Cordon: true, Drain: drain, Reason: req.Reason, By: p.Name, Source: sourceString(r), Now: s.now()})
}

// uncordonGPU answers POST /v1/workers/{id}/devices/{uuid}/uncordon: the
// GPU is offered again.
func (s *Server) uncordonGPU(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, uuid, err := workerDevice(r)
	if err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	return s.proposeCordon(w, r, command.CordonDevice{WorkerID: id, UUID: uuid, By: p.Name, Source: sourceString(r), Now: s.now()})
}

func (s *Server) proposeCordon(w http.ResponseWriter, r *http.Request, c command.CordonDevice) error {
	return s.proposeWorkerWrite(w, r, c, "GPU cordon changed", "worker_id", c.WorkerID, "uuid", c.UUID, "cordoned", c.Cordon, "drained", c.Drain, "by", c.By)
}

// workerDevice reads and bounds a route's worker id and GPU uuid.
func workerDevice(r *http.Request) (id, uuid string, err error) {
	id, uuid = r.PathValue("id"), r.PathValue("uuid")
	if err := validateID("worker id", id); err != nil {
		return "", "", err
	}
	if uuid == "" {
		return "", "", invalidf("a GPU uuid is required")
	}
	if err := checkLen("uuid", uuid, api.MaxDeviceUUIDBytes); err != nil {
		return "", "", err
	}
	return id, uuid, nil
}
