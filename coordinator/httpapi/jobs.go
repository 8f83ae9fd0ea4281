package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/translate"
	"github.com/gpulayer/gpulayer/coordinator/view"
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
	s.preflightPolicy(&spec) // preflight.go
	if err := s.checkDependenciesVisible(p, &spec); err != nil {
		return err
	}
	if !p.HasRole(auth.RoleAdmin) {
		for _, in := range spec.Inputs { // another team's artifact is not staged for this one
			if _, recorded := s.store.Artifact(in.SHA256); recorded && !s.store.ArtifactReadableBy(in.SHA256, p.Team) {
				return newError(api.CodeNotFound, "no artifact %s", in.SHA256)
			}
		}
	}
	count := max(spec.Count, 1)
	jobID := "j" + auth.NewID(8)
	ids := make([]string, count)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", jobID, i)
	}
	// The one encode of the write: the entry, its spec's digest and the
	// spec's size all come from one pass (command.EncodeSubmit).
	entry, size, err := command.EncodeSubmit(command.SubmitJob{JobID: jobID, TaskIDs: ids, Spec: translate.JobSpecFromAPI(spec), CreatedBy: p.Name, Now: s.now(),
		MaxPendingJobs: s.quotas.pendingLimit(), Team: p.Team})
	if err != nil {
		return invalidf("job spec cannot be encoded")
	}
	if err := s.quotas.checkJobSize(size); err != nil {
		return err
	}
	out, err := state.Propose[state.SubmitOutcome](r.Context(), s.propose, entry)
	if err != nil {
		return quotaRefusal(err)
	}
	status := http.StatusCreated
	if !out.Created {
		status = http.StatusOK
	}
	writeJSON(w, status, api.JobResponse{Job: view.Job(out.Job)})
	return nil
}

// maxJobsPageBytes bounds one page of GET /v1/jobs as JSON: a page holds
// limit jobs or fewer, stopping once this much is listed (at least one).
const maxJobsPageBytes = 8 << 20

// listJobs answers GET /v1/jobs?limit=&after= with one page of jobs,
// newest first, and the cursor of the next page (see jobcursor.go).
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q, err := queryOf(r, "limit", "after")
	if err != nil {
		return err
	}
	limit := api.DefaultJobsPage
	if v := q["limit"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > api.MaxJobsPage {
			return invalidf("limit must be an integer from 1 to %d", api.MaxJobsPage)
		}
		limit = n
	}
	before, err := parseJobCursor(q["after"])
	if err != nil {
		return err
	}
	team := p.Team // a client sees its team's jobs; an admin every team's
	if p.HasRole(auth.RoleAdmin) {
		team = ""
	}
	page, more := s.store.TeamJobsPage(team, before, limit)
	jobs, next, err := encodePage(page, more, maxJobsPageBytes)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, encodedJobList{Jobs: jobs, Next: jobCursor(next)})
	return nil
}

// encodedJobList is api.JobList with each job already encoded.
type encodedJobList struct {
	Jobs []json.RawMessage `json:"jobs"`
	Next string            `json:"next"`
}

// encodePage encodes a page's jobs, once each, stopping before the job
// that would take the page past budget bytes (the first job is always
// listed). next is the sequence number the following page starts below,
// 0 when nothing is left.
func encodePage(page []state.JobEntry, more bool, budget int) (jobs []json.RawMessage, next uint64, err error) {
	jobs = make([]json.RawMessage, 0, len(page))
	size := 0
	for _, e := range page {
		b, err := json.Marshal(view.Job(e.Job))
		if err != nil {
			return nil, 0, err
		}
		if size += len(b); size > budget && len(jobs) > 0 {
			more = true
			break
		}
		jobs = append(jobs, b)
	}
	if more && len(jobs) > 0 {
		next = page[len(jobs)-1].Seq
	}
	return jobs, next, nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if _, err := s.visibleJob(p, r.PathValue("id")); err != nil {
		return err
	}
	j, err := s.store.Job(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.JobResponse{Job: view.Job(j)})
	return nil
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var empty struct{}
	if _, err := decodeRequest(r, &empty, true); err != nil {
		return err
	}
	id := r.PathValue("id")
	access, err := s.visibleJob(p, id)
	if err != nil {
		return err
	}
	if !p.HasRole(auth.RoleAdmin) && access.Owner != p.Name {
		return newError(api.CodeForbidden, "client token %q may cancel only its own jobs", p.Name)
	}
	job, err := state.Propose[state.JobRecord](r.Context(), s.propose, command.CancelJob{JobID: id, By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.JobResponse{Job: view.Job(job)})
	return nil
}

// jobLogs answers newline-delimited JSON log entries; with follow=1 it keeps
// the response open until the job ends, within the stream limits: each
// write must finish within WriteTimeout (a client that stops reading is
// dropped) and the stream ends after MaxLife (the client reconnects). A
// follow stream of a job that has not ended holds one of the credential's
// long-poll slots; one of an ended job does not, since it never waits.
func (s *Server) jobLogs(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	q, err := queryOf(r, "follow")
	if err != nil {
		return err
	}
	if _, err := s.visibleJob(p, id); err != nil {
		return err
	}
	following, err := followFlag(q["follow"])
	if err != nil {
		return err
	}
	if following {
		// A refusal costs no read of the job's output.
		ended, err := s.store.JobEnded(id)
		if err != nil {
			return err
		}
		if !ended {
			release, err := s.polls.enter(p.CredentialID)
			if err != nil {
				return err
			}
			defer release()
		}
	}
	page, err := s.store.LogsPage(id, nil, 0)
	if err != nil {
		return err
	}
	noSniff(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	rc := http.NewResponseController(w)
	ctx := r.Context()
	if following {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.streams.MaxLife)
		defer cancel()
	}
	// Deadlines are wall-clock: the socket knows no other time.
	arm := func() {
		if following {
			_ = rc.SetWriteDeadline(time.Now().Add(s.streams.WriteTimeout))
		}
	}
	arm()
	if following {
		w.Header().Set("Trailer", api.HeaderStreamEnd)
	}
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	// The output is read a bounded page at a time (state.LogPageBytes),
	// so a large job's output is never all in memory.
	for {
		for i := range page.Lines {
			arm()
			if err := enc.Encode(view.LogEntry(page.Lines[i])); err != nil {
				return nil
			}
		}
		arm()
		if err := rc.Flush(); err != nil {
			return nil
		}
		switch {
		case page.More:
		case page.Ended || !following:
			if following {
				w.Header().Set(api.HeaderStreamEnd, api.StreamEndJobEnded)
			}
			return nil
		default:
			changed := s.store.Changed()
			page, err = s.store.LogsPage(id, page.Next, 0)
			if err != nil {
				return nil
			}
			if len(page.Lines) > 0 || page.More || page.Ended {
				continue
			}
			select {
			case <-changed:
			case <-ctx.Done():
				if r.Context().Err() == nil {
					w.Header().Set(api.HeaderStreamEnd, api.StreamEndMaxLife)
				}
				return nil
			}
		}
		page, err = s.store.LogsPage(id, page.Next, 0)
		if err != nil {
			return nil
		}
	}
}

// followFlag reads the logs route's follow parameter: 1 or true follows,
// 0, false or empty does not, anything else is refused.
func followFlag(v string) (bool, error) {
	switch v {
	case "1", "true":
		return true, nil
	case "", "0", "false":
		return false, nil
	}
	return false, invalidf("follow must be 1, true, 0 or false")
}

// visibleJob returns who may act on a job, or the answer a job that does
// not exist gets when the principal's team is not the job's: another
// team's job is not found, so its existence does not leak.
func (s *Server) visibleJob(p auth.Principal, id string) (state.JobAccess, error) {
	access, err := s.store.JobAccessOf(id)
	if err != nil {
		return state.JobAccess{}, err
	}
	if !p.SeesTeam(access.Team) {
		return state.JobAccess{}, fmt.Errorf("job %s: %w", id, state.ErrNotFound)
	}
	return access, nil
}
