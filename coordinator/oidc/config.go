package oidc

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// DefaultClaim is the claim mapped when none is configured.
const DefaultClaim = "groups"

// MaxSession bounds a minted client token's life, whatever the ID token
// says.
const MaxSession = 12 * time.Hour

// Roles a mapping may grant (the client roles of the protocol).
var Roles = []string{"read", "submit", "admin"}

// Bounds on configuration.
const (
	maxMappings   = 1024
	maxValueBytes = 256
)

// teamPattern is the token name grammar, which team names follow.
var teamPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)

// claimPattern bounds a claim name to what a JSON key in a token
// reasonably is.
var claimPattern = regexp.MustCompile(`^[A-Za-z0-9_:./-]{1,128}$`)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("oidc configuration")

// Mapping grants Team and Roles to a subject whose claim holds Value.
type Mapping struct {
	Value string
	Team  string
	Roles []string
}

// String renders the mapping in its flag form.
func (m Mapping) String() string {
	return m.Value + "=" + m.Team + ":" + strings.Join(m.Roles, "+")
}

// Config is the coordinator's single sign-on configuration.
type Config struct {
	// Issuer is the provider's issuer URL: https, or http on a loopback
	// address (tests, a provider on the same host).
	Issuer string
	// Audience is the client id ID tokens must be issued to.
	Audience string
	// Claim is the claim whose values are mapped (default "groups"); a
	// string or a list of strings.
	Claim string
	// Mappings are tried in order (see Map).
	Mappings []Mapping
}

// Enabled reports whether single sign-on is configured at all.
func (c Config) Enabled() bool {
	return c.Issuer != "" || c.Audience != "" || len(c.Mappings) > 0
}

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConfig, fmt.Sprintf(format, args...))
}

// ParseMapping reads VALUE=TEAM:ROLE[+ROLE]. The value is everything
// before the last '=' so that a group name may itself hold '='.
func ParseMapping(s string) (Mapping, error) {
	eq := strings.LastIndexByte(s, '=')
	if eq <= 0 {
		return Mapping{}, configErr("--oidc-map %q: want VALUE=TEAM:ROLE[+ROLE]", s)
	}
	value, rest := s[:eq], s[eq+1:]
	team, roles, ok := strings.Cut(rest, ":")
	if !ok || team == "" || roles == "" {
		return Mapping{}, configErr("--oidc-map %q: want VALUE=TEAM:ROLE[+ROLE]", s)
	}
	m := Mapping{Value: value, Team: team, Roles: strings.Split(roles, "+")}
	if err := m.validate(); err != nil {
		return Mapping{}, err
	}
	return m, nil
}

func (m Mapping) validate() error {
	switch {
	case m.Value == "" || len(m.Value) > maxValueBytes:
		return configErr("mapping %q: the claim value must be 1 to %d bytes", m.String(), maxValueBytes)
	case !teamPattern.MatchString(m.Team):
		return configErr("mapping %q: team %q must match %s", m.String(), m.Team, teamPattern.String())
	case len(m.Roles) == 0:
		return configErr("mapping %q: at least one role", m.String())
	}
	for _, r := range m.Roles {
		if !slices.Contains(Roles, r) {
			return configErr("mapping %q: unknown role %q (roles are %s)", m.String(), r, strings.Join(Roles, ", "))
		}
	}
	return nil
}

// Validate checks the configuration and fills the default claim. A
// configuration that is not Enabled is valid (single sign-on off).
func (c *Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if c.Issuer == "" || c.Audience == "" || len(c.Mappings) == 0 {
		return configErr("--oidc-issuer, --oidc-audience and at least one --oidc-map go together")
	}
	if err := checkIssuer(c.Issuer); err != nil {
		return err
	}
	if c.Claim == "" {
		c.Claim = DefaultClaim
	}
	if !claimPattern.MatchString(c.Claim) {
		return configErr("--oidc-claim %q must match %s", c.Claim, claimPattern.String())
	}
	if len(c.Mappings) > maxMappings {
		return configErr("at most %d mappings", maxMappings)
	}
	for _, m := range c.Mappings {
		if err := m.validate(); err != nil {
			return err
		}
	}
	return nil
}

// checkIssuer accepts https URLs, and http only on a loopback host.
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return configErr("--oidc-issuer %q: want an absolute URL with a host and no user, query or fragment", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return configErr("--oidc-issuer %q: http is accepted on a loopback address only; use https", issuer)
	}
	return configErr("--oidc-issuer %q: the scheme must be https", issuer)
}
