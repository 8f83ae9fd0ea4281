package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The team routes check shapes and bounds here; whether a team exists,
// may be deleted (no unfinished job) and what its usage is are the state
// machine's to decide, atomically with the write.

// validateTeamName holds a team name to the token name grammar.
func validateTeamName(field, name string) error { return validateName("team", field, name) }

// centiOf reads a GPU amount or weight, kept to 1/100, into hundredths.
func centiOf(field string, v float64, least, most float64) (int64, error) {
	c := math.Round(v * command.CentiGPUsPerGPU)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < least || v > most:
		return 0, invalidf("%s must be from %g to %g", field, least, most)
	case math.Abs(v*command.CentiGPUsPerGPU-c) > 1e-6:
		return 0, invalidf("%s is kept to 1/100: %g has more decimals", field, v)
	}
	return int64(c), nil
}

func weightCenti(w float64) (int64, error) {
	c, err := centiOf("weight", w, 0.01, api.MaxTeamWeight)
	if err == nil && c <= 0 {
		err = invalidf("weight must be above 0")
	}
	return c, err
}

func amountCenti(field string, a *api.GPUAmount) (int64, error) {
	return centiOf(field+".gpus", a.GPUs, 0, api.MaxTeamGPUs)
}

func (s *Server) createTeam(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.CreateTeamRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if err := validateTeamName("name", req.Name); err != nil {
		return err
	}
	set := command.TeamSettings{WeightCenti: teams.DefaultWeightCenti}
	var err error
	if req.Weight != nil {
		if set.WeightCenti, err = weightCenti(*req.Weight); err != nil {
			return err
		}
	}
	if req.Quota != nil {
		if req.Quota.GPUs != nil {
			if set.QuotaCentiGPUs, err = amountCenti("quota", &api.GPUAmount{GPUs: *req.Quota.GPUs}); err != nil {
				return err
			}
		}
		if set.ArtifactQuotaBytes, err = artifactQuotaBytes(req.Quota.ArtifactBytes); err != nil {
			return err
		}
	}
	if req.BorrowLimit != nil {
		l, err := amountCenti("borrow_limit", req.BorrowLimit)
		if err != nil {
			return err
		}
		set.BorrowLimitCenti = &l
	}
	t, err := state.Propose[state.TeamRecord](r.Context(), s.propose, command.CreateTeam{Name: req.Name, Settings: set, By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("team created", "team", req.Name, "by", p.Name)
	writeJSON(w, http.StatusCreated, api.TeamResponse{Team: view.Team(t)})
	return nil
}

// listTeams answers every team to an admin, and its own to anyone else.
func (s *Server) listTeams(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	var teams []state.TeamRecord
	for _, t := range s.store.Teams() {
		if p.SeesTeam(t.Team.Name) {
			teams = append(teams, t)
		}
	}
	list := view.Teams(teams)
	if list == nil {
		list = []api.Team{}
	}
	writeJSON(w, http.StatusOK, api.TeamList{Teams: list})
	return nil
}

func (s *Server) getTeam(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	name := r.PathValue("name")
	if err := validateTeamName("team name", name); err != nil {
		return err
	}
	if !p.SeesTeam(name) {
		return errTeamNotFound(name) // another team's existence does not leak
	}
	t, err := s.store.TeamByName(name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.TeamResponse{Team: view.Team(t)})
	return nil
}

func errTeamNotFound(name string) error {
	return newError(api.CodeNotFound, "team %s: not found", name)
}

func (s *Server) updateTeam(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	name := r.PathValue("name")
	if err := validateTeamName("team name", name); err != nil {
		return err
	}
	var req api.UpdateTeamRequest
	raw, err := decodeRequest(r, &req, false)
	if err != nil {
		return err
	}
	c := command.UpdateTeam{Name: name, By: p.Name, Now: s.now(), Source: sourceString(r), ClearBorrowLimit: req.ClearBorrowLimit || nullBorrowLimit(raw),
		ClearArtifactQuota: req.ClearArtifactQuota || nullArtifactQuota(raw)}
	if req.Weight != nil {
		v, err := weightCenti(*req.Weight)
		if err != nil {
			return err
		}
		c.WeightCenti = &v
	}
	if req.Quota != nil && req.Quota.GPUs != nil {
		v, err := amountCenti("quota", &api.GPUAmount{GPUs: *req.Quota.GPUs})
		if err != nil {
			return err
		}
		c.QuotaCentiGPUs = &v
	}
	if req.Quota != nil && req.Quota.ArtifactBytes != nil {
		if c.ClearArtifactQuota {
			return invalidf("quota.artifact_bytes is both given and cleared")
		}
		if c.ArtifactQuotaBytes, err = artifactQuotaBytes(req.Quota.ArtifactBytes); err != nil {
			return err
		}
	}
	if req.BorrowLimit != nil {
		if c.ClearBorrowLimit {
			return invalidf("borrow_limit is both given and cleared")
		}
		v, err := amountCenti("borrow_limit", req.BorrowLimit)
		if err != nil {
			return err
		}
		c.BorrowLimitCenti = &v
	}
	if c.WeightCenti == nil && c.QuotaCentiGPUs == nil && c.BorrowLimitCenti == nil && !c.ClearBorrowLimit && c.ArtifactQuotaBytes == nil && !c.ClearArtifactQuota {
		return invalidf("nothing to change: give weight, quota or borrow_limit")
	}
	t, err := state.Propose[state.TeamRecord](r.Context(), s.propose, c)
	if err != nil {
		return err
	}
	s.log.Info("team updated", "team", name, "by", p.Name)
	writeJSON(w, http.StatusOK, api.TeamResponse{Team: view.Team(t)})
	return nil
}

// artifactQuotaBytes checks a team's artifact quota: nil (none) or 0 to
// teams.MaxArtifactBytes.
func artifactQuotaBytes(n *int64) (*int64, error) {
	if n == nil {
		return nil, nil
	}
	if *n < 0 || *n > teams.MaxArtifactBytes {
		return nil, invalidf("quota.artifact_bytes must be from 0 to %d", int64(teams.MaxArtifactBytes))
	}
	v := *n
	return &v, nil
}

// nullArtifactQuota reports whether a PATCH body set quota.artifact_bytes
// to null, which lifts the team's artifact quota (absent keeps it).
func nullArtifactQuota(body []byte) bool {
	var fields struct {
		Quota map[string]json.RawMessage `json:"quota"`
	}
	if json.Unmarshal(body, &fields) != nil {
		return false
	}
	v, ok := fields.Quota["artifact_bytes"]
	return ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// nullBorrowLimit reports whether a PATCH body set borrow_limit to null,
// which lifts the limit (absent keeps it).
func nullBorrowLimit(body []byte) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return false
	}
	v, ok := fields["borrow_limit"]
	return ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func (s *Server) deleteTeam(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	name := r.PathValue("name")
	if err := validateTeamName("team name", name); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	t, err := state.Propose[state.TeamRecord](r.Context(), s.propose, command.DeleteTeam{Name: name, By: p.Name, Now: s.now(), Source: sourceString(r)})
	if err != nil {
		return err
	}
	s.log.Info("team deleted", "team", name, "by", p.Name)
	writeJSON(w, http.StatusOK, api.TeamResponse{Team: view.Team(t)})
	return nil
}
