package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Limits on audit reads.
const (
	defaultAuditLimit = 1000
	maxAuditLimit     = 10000
)

// listAudit answers GET /v1/audit?since=&until=&kind=&after=&limit= with
// events oldest first. since and until are RFC 3339 times (until is
// exclusive); kind is a comma-separated list of kinds or areas ("token"
// matches every token.* event); after is the seq to page from.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	q, err := queryOf(r, "since", "until", "kind", "after", "limit")
	if err != nil {
		return err
	}
	var f audit.Filter
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if v := q[t.name]; v != "" {
			if *t.dst, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return invalidf("%s must be an RFC 3339 time", t.name)
			}
		}
	}
	if v := q["kind"]; v != "" {
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				if len(k) > 64 {
					return invalidf("kind is too long")
				}
				f.Kinds = append(f.Kinds, k)
			}
		}
	}
	if v := q["after"]; v != "" {
		if f.After, err = strconv.ParseUint(v, 10, 64); err != nil {
			return invalidf("after must be a sequence number")
		}
	}
	f.Limit = defaultAuditLimit
	if v := q["limit"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAuditLimit {
			return invalidf("limit must be between 1 and %d", maxAuditLimit)
		}
		f.Limit = n
	}
	evs := view.AuditEvents(s.store.Audit(f))
	out := api.AuditList{Events: evs}
	if len(evs) == f.Limit {
		out.NextAfter = evs[len(evs)-1].Seq
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
