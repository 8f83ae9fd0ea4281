package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/ui"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// dashboard serves the web dashboard's static files (GET /ui and
// /ui/{path...}). They hold no data, so the routes are public; every node
// answers them itself (see local). A path that names no file is the
// protocol's 404 not_found, with the dashboard's security headers.
func (s *Server) dashboard(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	f, ok := ui.Lookup(r.PathValue("path"))
	if !ok {
		ui.SetSecurityHeaders(w.Header())
		return newError(api.CodeNotFound, "no dashboard file at %s", r.URL.Path)
	}
	ui.Serve(w, r, f)
	return nil
}
