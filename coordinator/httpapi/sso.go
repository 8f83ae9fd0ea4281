package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/oidc"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Single sign-on: POST /v1/auth/oidc takes an ID token from the
// configured provider and mints a client token for the team and roles
// its claim maps to, through the same replicated path as POST
// /v1/tokens (only the secret's hash is stored). The route takes no
// credential and is rate limited by source like enrollment. Every
// verification failure answers the same 401, so a prober learns nothing
// of which check failed (the log and the audit say which); a verified
// subject that maps to nothing is 403. The ID token itself is never
// logged, audited or answered.

// SSO verifies ID tokens (coordinator/oidc's Verifier is one).
type SSO interface {
	Issuer() string
	Verify(ctx context.Context, raw string) (oidc.Identity, error)
}

const ssoRoute = "POST " + api.PathAuthOIDC

func (s *Server) exchangeOIDC(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if s.sso == nil {
		return newError(api.CodeNotFound, "single sign-on is not configured on this cluster")
	}
	var req api.OIDCExchangeRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if req.IDToken == "" || len(req.IDToken) > oidc.MaxIDTokenBytes {
		return invalidf("id_token is required, at most %d bytes", oidc.MaxIDTokenBytes)
	}
	id, err := s.sso.Verify(r.Context(), req.IDToken)
	if err != nil {
		return s.ssoRefused(r, id, err)
	}
	if !s.store.TeamExists(id.Team) {
		return s.ssoRefused(r, id, &oidc.Refusal{Reason: oidc.ReasonUnmapped, Detail: "mapped to team " + id.Team + ", which does not exist"})
	}
	minted, err := auth.Mint(api.PrefixClient)
	if err != nil {
		return err
	}
	now := s.now()
	rec := command.CredentialRecord{
		Kind: api.TokenKindClient, Name: ssoTokenName(id.Subject, minted.Token.ID), Roles: id.Roles, Team: id.Team,
		CreatedAt: now, ExpiresAt: id.Expires, CreatedBy: ssoActor(id),
	}
	if _, err := s.proposeToken(r, minted, rec); err != nil {
		return err
	}
	s.log.Info("single sign-on", "issuer", id.Issuer, "subject", id.Subject, "team", id.Team, "roles", strings.Join(id.Roles, ","), "credential_id", rec.ID)
	writeJSON(w, http.StatusCreated, api.OIDCExchangeResponse{
		Token: minted.Token.String(), ExpiresAt: api.FormatTime(id.Expires), Team: id.Team, Roles: id.Roles, Subject: id.Subject,
	})
	return nil
}

// ssoRefused logs and audits a refused ID token (which check failed; the
// subject only once verified) and answers 401 or 403.
func (s *Server) ssoRefused(r *http.Request, id oidc.Identity, err error) error {
	reason, detail := oidc.ReasonOf(err), "not verified"
	if rf, ok := errors.AsType[*oidc.Refusal](err); ok {
		detail = rf.Detail
	}
	code := api.CodeUnauthenticated
	if reason == oidc.ReasonUnmapped {
		code = api.CodeForbidden
	}
	s.log.Info("single sign-on refused", "request_id", requestID(r), "issuer", s.sso.Issuer(), "subject", id.Subject, "source", sourceString(r), "reason", detail)
	s.metrics.refused(auth.ReasonOther)
	s.audit.add(command.AuditEvent{
		Time: s.now(), Kind: "auth.refused", Actor: ssoActor(id), Subject: id.Subject, Source: sourceString(r),
		Route: ssoRoute, Code: string(code), Detail: "oidc issuer " + s.sso.Issuer() + ": " + detail,
	})
	if code == api.CodeForbidden {
		return newError(code, "your identity maps to no team or role on this cluster; ask an administrator")
	}
	return newError(code, "the ID token was not accepted")
}

// ssoActor names who a single sign-on acted for, in the audit log: the
// issuer and the subject (empty before the token was verified).
func ssoActor(id oidc.Identity) string {
	if id.Subject == "" {
		return ""
	}
	return fmt.Sprintf("oidc iss=%s sub=%s", id.Issuer, id.Subject)
}

// ssoTokenName is the minted token's name: "sso-", the subject made to
// fit the token name grammar, and the token id's first eight characters,
// since a live client token's name must be unique and a person may log
// in from several machines.
func ssoTokenName(subject, tokenID string) string {
	const keep = 64 - len("sso-") - 1 - 8
	var b strings.Builder
	b.WriteString("sso-")
	for i := 0; i < len(subject) && i < keep; i++ {
		c := subject[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.@-", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String() + "-" + tokenID[:8]
}
