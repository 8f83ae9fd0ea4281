package httpapi

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// queue answers GET /v1/queue?team=&limit=: the order the scheduler
// serves, per team, with each task's reason. A client sees its own team
// (another team's reads as not found); an admin every team, or the one
// it names.
func (s *Server) queue(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q, err := queryOf(r, "team", "limit")
	if err != nil {
		return err
	}
	limit := api.DefaultQueueLimit
	if v := q["limit"]; v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > api.MaxQueueLimit {
			return invalidf("limit must be a whole number from 1 to %d", api.MaxQueueLimit)
		}
	}
	team := q["team"]
	if team != "" {
		if err := validateTeamName("team", team); err != nil {
			return err
		}
		if !p.SeesTeam(team) {
			return errTeamNotFound(team) // another team's existence does not leak
		}
	} else if !p.HasRole(auth.RoleAdmin) {
		team = cmp.Or(p.Team, api.DefaultTeam)
	}
	qs, err := s.store.Queue(team, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.Queue(qs))
	return nil
}
