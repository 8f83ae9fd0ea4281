package auth

import "slices"

// Kind is the kind of credential a principal presented.
type Kind string

// Credential kinds. They never substitute for one another.
const (
	KindNone     Kind = ""
	KindClient   Kind = "client"
	KindJoin     Kind = "join"
	KindInstance Kind = "instance"
	KindWorker   Kind = "worker"
)

// Client roles.
const (
	RoleAdmin  = "admin"
	RoleSubmit = "submit"
	RoleRead   = "read"
)

// KindForPrefix maps a token prefix to its credential kind.
func KindForPrefix(prefix string) Kind {
	switch prefix {
	case "glc":
		return KindClient
	case "glj":
		return KindJoin
	case "gli":
		return KindInstance
	case "glw":
		return KindWorker
	}
	return KindNone
}

// Principal is who a request acts as, once authenticated.
type Principal struct {
	Kind         Kind
	CredentialID string
	// Name is the client token's name, used for attribution.
	Name  string
	Roles []string
	// WorkerID is set for worker credentials.
	WorkerID string
	// InstanceID is set for instance tokens: the instance they are bound
	// to.
	InstanceID string
	// Team is a client token's team (default for one created before
	// teams or without one): its read and submit roles reach that
	// team's jobs only.
	Team string
}

// SeesTeam reports whether the principal may see the records of a team:
// an admin sees every team, another client its own.
func (p Principal) SeesTeam(team string) bool {
	return p.HasRole(RoleAdmin) || p.Team == team
}

// Roles lists the client roles, weakest first.
var Roles = []string{RoleRead, RoleSubmit, RoleAdmin}

// ValidRole reports whether r is a client role.
func ValidRole(r string) bool { return slices.Contains(Roles, r) }

// HasRole reports whether a client principal may act with role r. Admin
// implies submit, and submit implies read.
func (p Principal) HasRole(r string) bool {
	if p.Kind != KindClient {
		return false
	}
	switch r {
	case RoleRead:
		return slices.Contains(p.Roles, RoleRead) || slices.Contains(p.Roles, RoleSubmit) || slices.Contains(p.Roles, RoleAdmin)
	case RoleSubmit:
		return slices.Contains(p.Roles, RoleSubmit) || slices.Contains(p.Roles, RoleAdmin)
	case RoleAdmin:
		return slices.Contains(p.Roles, RoleAdmin)
	}
	return false
}
