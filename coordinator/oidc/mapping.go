package oidc

import "slices"

// maxClaimValues bounds how many of a claim's values are looked at: a
// token listing more is refused as unmapped rather than scanned.
const maxClaimValues = 4096

// Grant is what a subject is mapped to.
type Grant struct {
	Team  string
	Roles []string
}

// claimValues reads a claim that is a string or a list of strings. Any
// other shape (a number, an object, a list holding one) yields nothing,
// and so maps to nothing.
func claimValues(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		if len(x) > maxClaimValues {
			return nil
		}
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

// Map decides a subject's team and roles from its claim values. The
// first mapping, in configuration order, whose value the claim holds
// decides the team; the roles are the union of every mapping that
// matches a claim value and names that same team (so "ml=ml:read" and
// "ml-admins=ml:admin" give an ml admin both). Mappings to other teams
// are ignored: a token acts within one team. ok is false when nothing
// matches.
func Map(mappings []Mapping, values []string) (g Grant, ok bool) {
	for _, m := range mappings {
		if !slices.Contains(values, m.Value) {
			continue
		}
		if !ok {
			g.Team, ok = m.Team, true
		}
		if m.Team == g.Team {
			g.Roles = append(g.Roles, m.Roles...)
		}
	}
	if !ok {
		return Grant{}, false
	}
	// Roles weakest first, each once, as client tokens hold them.
	var roles []string
	for _, r := range Roles {
		if slices.Contains(g.Roles, r) {
			roles = append(roles, r)
		}
	}
	g.Roles = roles
	return g, true
}
