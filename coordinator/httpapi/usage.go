package httpapi

import (
	"net/http"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// defaultUsageRange is the range GET /v1/usage reads without from.
const defaultUsageRange = 30 * 24 * time.Hour

// usage answers GET /v1/usage?from=&to=&group_by=: GPU time by team and
// one dimension over a range, from the replicated usage table (or, by
// job, from the jobs still retained). A client sees its team's; an admin
// every team's.
func (s *Server) usage(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q, err := queryOf(r, "from", "to", "group_by")
	if err != nil {
		return err
	}
	to := s.now()
	if v := q["to"]; v != "" {
		if to, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return invalidf("to must be an RFC 3339 time")
		}
	}
	from := to.Add(-defaultUsageRange)
	if v := q["from"]; v != "" {
		if from, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return invalidf("from must be an RFC 3339 time")
		}
	}
	if !from.Before(to) || to.Sub(from) > api.MaxUsageRange*24*time.Hour {
		return invalidf("from must come before to, at most %d days before it", api.MaxUsageRange)
	}
	groupBy := q["group_by"]
	team := p.Team // a client reads its team's; an admin every team's
	if p.HasRole(auth.RoleAdmin) {
		team = ""
	}
	var rows []api.UsageRow
	switch groupBy {
	case "":
		groupBy = api.UsageByTeam
		fallthrough
	case api.UsageByTeam, api.UsageByGPUModel, api.UsageByUser:
		rows = view.UsageRows(s.store.UsageRows(from, to), groupBy, p.SeesTeam)
	case api.UsageByJob:
		rows = view.JobUsageRows(s.store.JobsUsage(team, from, to))
	default:
		return invalidf("group_by must be team, gpu_model, user or job")
	}
	if rows == nil {
		rows = []api.UsageRow{}
	}
	writeJSON(w, http.StatusOK, api.UsageResponse{From: api.FormatTime(from), To: api.FormatTime(to), GroupBy: groupBy, Rows: rows})
	return nil
}
