package httpapi

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The token routes (admin) create, list and revoke client, join and
// instance tokens. The handler mints the token and stamps the time; the
// state machine refuses a name already held by a live client token and
// join-token groups that do not exist. A token is shown once, in the
// answer to its creation; afterwards only its id and metadata.

// Limits on token requests.
const (
	maxExpiresIn   = 10 * 365 * 24 * 3600
	maxTokenUses   = 1_000_000
	maxTokenGroups = api.MaxTokenGroups
	// defaultInstanceTTL bounds an instance token that was given no expiry:
	// it is meant to be used once, at the instance's first boot.
	defaultInstanceTTL = 24 * 3600
)

var (
	tokenNamePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)
	instanceIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:/@-]{0,255}$`)
	tokenIDPattern    = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// validateTokenName checks a token name. The reserved names are refused:
// "admin" names only the token `coordinator init` mints, so attribution to
// it cannot be forged by a token an admin creates later.
func validateTokenName(name string) error { return validateName("token", "name", name) }

// validateName holds a token's or a team's name (what, in messages) in
// the field named field to the token name grammar, refusing the reserved
// names.
func validateName(what, field, name string) error {
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return invalidf("%s is required", field)
	case lower == "admin" || lower == "system" || lower == "internal" || strings.HasPrefix(name, "_"):
		return newError(api.CodeReservedIdentifier, "%s name %q is reserved", what, name)
	case !tokenNamePattern.MatchString(name):
		return invalidf("%s %q must match %s", field, name, tokenNamePattern.String())
	}
	return nil
}

func expiry(now time.Time, seconds int64) (time.Time, error) {
	switch {
	case seconds < 0 || seconds > maxExpiresIn:
		return time.Time{}, invalidf("expires_in_seconds must be between 1 and %d (0 or absent: no expiry)", maxExpiresIn)
	case seconds == 0:
		return time.Time{}, nil
	}
	return now.Add(time.Duration(seconds) * time.Second), nil
}

// normaliseRoles checks client roles and returns them sorted weakest
// first, each once; no roles means read.
func normaliseRoles(roles []string) ([]string, error) {
	if len(roles) == 0 {
		return []string{auth.RoleRead}, nil
	}
	var out []string
	for _, r := range auth.Roles {
		if slices.Contains(roles, r) {
			out = append(out, r)
		}
	}
	for _, r := range roles {
		if !auth.ValidRole(r) {
			return nil, invalidf("roles: %q is not one of %s", r, strings.Join(auth.Roles, ", "))
		}
	}
	return out, nil
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.CreateTokenRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	switch req.Kind {
	case api.TokenKindClient, api.TokenKindJoin:
	case api.TokenKindInstance:
		return invalidf("instance tokens are created with POST /v1/instance-tokens")
	default:
		return invalidf("kind must be %q or %q", api.TokenKindClient, api.TokenKindJoin)
	}
	if err := validateTokenName(req.Name); err != nil {
		return err
	}
	now := s.now()
	expires, err := expiry(now, req.ExpiresInSeconds)
	if err != nil {
		return err
	}
	rec := command.CredentialRecord{Kind: req.Kind, Name: req.Name, CreatedAt: now, ExpiresAt: expires, CreatedBy: p.Name}
	prefix := api.PrefixClient
	if req.Kind == api.TokenKindClient {
		if req.MaxUses != 0 || req.RequiresApproval || len(req.Groups) > 0 || len(req.Labels) > 0 || len(req.GPUModels) > 0 {
			return invalidf("max_uses, requires_approval, groups, labels and gpu_models are for join tokens")
		}
		if rec.Roles, err = normaliseRoles(req.Roles); err != nil {
			return err
		}
		rec.Team = api.DefaultTeam
		if req.Team != "" {
			if err := validateTeamName("team", req.Team); err != nil {
				return err
			}
			rec.Team = req.Team // the state machine answers 404 for a team that does not exist
		}
	} else {
		prefix = api.PrefixJoin
		switch {
		case len(req.Roles) > 0:
			return invalidf("roles are for client tokens")
		case req.Team != "":
			return invalidf("team is for client tokens")
		case req.MaxUses < 0 || req.MaxUses > maxTokenUses:
			return invalidf("max_uses must be between 1 and %d (0 or absent: unlimited)", maxTokenUses)
		case len(req.Groups) > maxTokenGroups:
			return invalidf("groups: at most %d", maxTokenGroups)
		}
		for _, g := range req.Groups {
			if err := validateID("groups", g); err != nil {
				return err
			}
		}
		if err := validateLabelMap(req.Labels); err != nil {
			return err
		}
		if err := checkStrings("gpu_models", req.GPUModels, api.MaxTokenGPUModels, api.MaxDeviceNameBytes); err != nil {
			return err
		}
		for i, m := range req.GPUModels {
			if strings.TrimSpace(m) == "" {
				return invalidf("gpu_models[%d]: empty", i)
			}
		}
		rec.GPUModels = slices.Clone(req.GPUModels)
		groups := slices.Clone(req.Groups)
		slices.Sort(groups)
		rec.Groups = slices.Compact(groups)
		rec.MaxUses, rec.RequiresApproval, rec.Labels = req.MaxUses, req.RequiresApproval, req.Labels
	}
	return s.mintToken(w, r, prefix, rec)
}

func (s *Server) createInstanceToken(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req api.CreateInstanceTokenRequest
	if _, err := decodeRequest(r, &req, false); err != nil {
		return err
	}
	if !instanceIDPattern.MatchString(req.InstanceID) {
		return invalidf("instance_id is required and must match %s", instanceIDPattern.String())
	}
	name := req.Name
	if name == "" {
		name = "instance"
	} else if err := validateTokenName(name); err != nil {
		return err
	}
	if req.ExpiresInSeconds == 0 {
		req.ExpiresInSeconds = defaultInstanceTTL
	}
	now := s.now()
	expires, err := expiry(now, req.ExpiresInSeconds)
	if err != nil {
		return err
	}
	return s.mintToken(w, r, api.PrefixInstance, command.CredentialRecord{
		Kind: api.TokenKindInstance, Name: name, CreatedAt: now, ExpiresAt: expires, CreatedBy: p.Name,
		MaxUses: 1, InstanceID: req.InstanceID,
	})
}

// mintToken mints the secret, proposes the record and answers the token
// once.
func (s *Server) mintToken(w http.ResponseWriter, r *http.Request, prefix string, rec command.CredentialRecord) error {
	minted, err := auth.Mint(prefix)
	if err != nil {
		return err
	}
	tok, err := s.proposeToken(r, minted, rec)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, api.CreateTokenResponse{TokenInfo: view.Token(tok), Token: minted.Token.String()})
	return nil
}

// proposeToken stores a minted token's record (its id and the secret's
// hash, never the secret) through Raft. Every token creation, single
// sign-on's included, goes through it.
func (s *Server) proposeToken(r *http.Request, minted auth.Minted, rec command.CredentialRecord) (creds.Credential, error) {
	rec.ID, rec.Hash = minted.Token.ID, minted.Hash
	tok, err := state.Propose[creds.Credential](r.Context(), s.propose, command.CreateToken{Credential: rec, Source: sourceString(r), Now: rec.CreatedAt})
	if err != nil {
		return creds.Credential{}, err
	}
	s.log.Info("token created", "credential_id", rec.ID, "kind", rec.Kind, "name", rec.Name, "by", rec.CreatedBy)
	return tok, nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	q, err := queryOf(r, "kind")
	if err != nil {
		return err
	}
	kind := q["kind"]
	switch kind {
	case "", api.TokenKindClient, api.TokenKindJoin, api.TokenKindInstance:
	default:
		return invalidf("kind must be client, join or instance")
	}
	writeJSON(w, http.StatusOK, api.TokenList{Tokens: s.tokensOf(kind)})
	return nil
}

// listInstanceTokens answers GET /v1/instance-tokens (PROTOCOL.md: "GET
// on each" of the credential routes): the instance tokens, as GET
// /v1/tokens?kind=instance lists them.
func (s *Server) listInstanceTokens(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	if _, err := queryOf(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.TokenList{Tokens: s.tokensOf(api.TokenKindInstance)})
	return nil
}

// tokensOf lists the tokens of kind ("": every kind), never a secret.
func (s *Server) tokensOf(kind string) []api.TokenInfo {
	out := []api.TokenInfo{}
	for _, t := range s.store.Tokens() {
		if kind == "" || t.Kind == kind {
			out = append(out, view.Token(t))
		}
	}
	return out
}

func validateTokenID(id string) error {
	if !tokenIDPattern.MatchString(id) {
		return invalidf("token id %q must be 16 lowercase hex characters (the part after the prefix)", id)
	}
	return nil
}

func (s *Server) getToken(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	id := r.PathValue("id")
	if err := validateTokenID(id); err != nil {
		return err
	}
	t, err := s.store.Token(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.TokenResponse{Token: view.Token(t)})
	return nil
}

func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	id := r.PathValue("id")
	if err := validateTokenID(id); err != nil {
		return err
	}
	if err := emptyBody(r); err != nil {
		return err
	}
	tok, err := state.Propose[creds.Credential](r.Context(), s.propose, command.RevokeToken{TokenID: id, By: p.Name, Source: sourceString(r), Now: s.now()})
	if err != nil {
		return err
	}
	s.log.Info("token revoked", "credential_id", id, "by", p.Name)
	writeJSON(w, http.StatusOK, api.TokenResponse{Token: view.Token(tok)})
	return nil
}
