package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func (s *Server) submitJob(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var spec api.JobSpec
	if _, err := decodeRequest(r, &spec, false); err != nil {
		return err
	}
	if err := validateJobSpec(&spec); err != nil {
		return err
	}
	count := max(spec.Count, 1)
	jobID := "j" + auth.NewID(8)
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", jobID, i)
	}
	res, err := s.propose(r.Context(), command.SubmitJob{JobID: jobID, TaskIDs: ids, Spec: spec, CreatedBy: p.Name, Now: s.now()})
	if err != nil {
		return err
	}
	if res.Err != nil {
		return res.Err
	}
	out := res.Value.(state.SubmitOutcome)
	status := http.StatusCreated
	if !out.Created {
		status = http.StatusOK
	}
	writeJSON(w, status, api.JobResponse{Job: out.Job})
	return nil
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return invalidf("limit must be a non-negative integer")
		}
		limit = n
	}
	writeJSON(w, http.StatusOK, api.JobList{Jobs: s.store.Jobs(limit)})
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	j, err := s.store.Job(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.JobResponse{Job: j})
	return nil
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var empty struct{}
	if _, err := decodeRequest(r, &empty, true); err != nil {
		return err
	}
	id := r.PathValue("id")
	owner, err := s.store.JobOwner(id)
	if err != nil {
		return err
	}
	if !p.HasRole(auth.RoleAdmin) && owner != p.Name {
		return newError(api.CodeForbidden, "client token %q may cancel only its own jobs", p.Name)
	}
	res, err := s.propose(r.Context(), command.CancelJob{JobID: id, By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	if res.Err != nil {
		return res.Err
	}
	writeJSON(w, http.StatusOK, api.JobResponse{Job: res.Value.(api.Job)})
	return nil
}

// jobLogs answers newline-delimited JSON log entries; with follow=1 it keeps
// the response open until the job ends.
func (s *Server) jobLogs(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	id := r.PathValue("id")
	follow := r.URL.Query().Get("follow")
	following := follow == "1" || follow == "true"
	entries, cursor, done, err := s.store.Logs(id, nil)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	rc := http.NewResponseController(w)
	if following {
		_ = rc.SetWriteDeadline(time.Time{})
	}
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for {
		for i := range entries {
			if err := enc.Encode(&entries[i]); err != nil {
				return nil
			}
		}
		_ = rc.Flush()
		if !following || done {
			return nil
		}
		changed := s.store.Changed()
		entries, cursor, done, err = s.store.Logs(id, cursor)
		if err != nil {
			return nil
		}
		if len(entries) > 0 || done {
			continue
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return nil
		}
		entries, cursor, done, err = s.store.Logs(id, cursor)
		if err != nil {
			return nil
		}
	}
}
