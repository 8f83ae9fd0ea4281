package httpapi

import (
	"net/http"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// tokenSelf answers GET /v1/auth/self: the calling client token's own
// record (id, name, team, roles, expiry; never its secret), so that a
// holder of a token minted by single sign-on or handed over by an admin
// can see what it acts as. The dashboard shows it after sign-in.
func (s *Server) tokenSelf(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if err := emptyBody(r); err != nil {
		return err
	}
	t, err := s.store.Token(p.CredentialID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.TokenResponse{Token: view.Token(t)})
	return nil
}
