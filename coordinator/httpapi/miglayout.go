package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/internal/gpusku"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// setMIGLayout answers PUT /v1/workers/{id}/devices/{uuid}/mig {layout}:
// the GPU takes no new task, and its agent drains it and splits it into
// the MIG devices of layout (none: the GPU whole). The layout is checked
// against the GPU model's profiles here (internal/gpusku), before it is
// proposed, so that replay never depends on the catalogue.
func (s *Server) setMIGLayout(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, uuid, err := workerDevice(r) // cordon.go
	if err != nil {
		return err
	}
	var req api.MIGLayoutRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if req.Layout == nil {
		return invalidf("layout is required: a list of MIG profiles, [] for the GPU whole")
	}
	if len(req.Layout) > api.MaxMIGLayout {
		return invalidf("layout has %d MIG devices, at most %d fit a GPU", len(req.Layout), api.MaxMIGLayout)
	}
	for i, prof := range req.Layout {
		if prof == "" {
			return invalidf("layout[%d] is empty", i)
		}
		if !api.ValidMIGProfile(prof) {
			return invalidf("layout[%d] %s is not a MIG profile (as 3g.40gb)", i, shortQuote(prof))
		}
	}
	if err := s.checkMIGLayout(id, uuid, req.Layout); err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.SetMIGLayout{WorkerID: id, UUID: uuid, Layout: req.Layout, By: p.Name, Source: sourceString(r), Now: s.now()},
		"MIG layout requested", "worker_id", id, "uuid", uuid, "layout", req.Layout, "by", p.Name)
}

// clearMIGLayout answers DELETE /v1/workers/{id}/devices/{uuid}/mig: the
// request is dropped and the GPU taken as it is (a failed repartition
// given up).
func (s *Server) clearMIGLayout(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id, uuid, err := workerDevice(r)
	if err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	return s.proposeWorkerWrite(w, r, command.SetMIGLayout{WorkerID: id, UUID: uuid, Clear: true, By: p.Name, Source: sourceString(r), Now: s.now()},
		"MIG layout request cleared", "worker_id", id, "uuid", uuid, "by", p.Name)
}

// checkMIGLayout checks layout against the model of GPU uuid of worker
// id, as this node's state has it: a model without known MIG profiles is
// a conflict, a layout it cannot take invalid. A worker or GPU this node
// does not know is left to the write, which answers not found.
func (s *Server) checkMIGLayout(id, uuid string, layout []string) error {
	rec, err := s.store.Worker(id)
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(rec.Worker.Devices, func(d command.Device) bool { return d.UUID == uuid })
	if i < 0 || rec.Worker.Devices[i].Parent != "" {
		return nil // the write refuses both
	}
	err = gpusku.CheckMIGLayout(rec.Worker.Devices[i].Name, layout)
	switch {
	case errors.Is(err, gpusku.ErrNoMIG):
		return newError(api.CodeConflict, "GPU %s cannot be repartitioned: %v", uuid, err)
	case err != nil:
		return invalidf("%v", err)
	}
	return nil
}
