package api

// AuditEvent is one entry of the replicated audit log. It never holds a
// secret: credentials appear by id only.
type AuditEvent struct {
	Seq  uint64 `json:"seq"`
	Time string `json:"time"`
	// Kind names what happened, "area.verb": token.created,
	// worker.approved, enrollment.refused, auth.refused, …
	Kind string `json:"kind"`
	// Actor is who acted: a client token's name, a worker id, or the
	// system.
	Actor string `json:"actor,omitempty"`
	// CredentialID and CredentialKind name the credential presented or
	// acted upon.
	CredentialID   string `json:"credential_id,omitempty"`
	CredentialKind string `json:"credential_kind,omitempty"`
	WorkerID       string `json:"worker_id,omitempty"`
	// Subject is the object acted upon: a token id, group id, job id,
	// allowlist key, digest.
	Subject string `json:"subject,omitempty"`
	// Team is the team the event concerns (a job's, a client token's, a
	// team's own), where it concerns one.
	Team   string `json:"team,omitempty"`
	Source string `json:"source,omitempty"`
	Route  string `json:"route,omitempty"`
	// Code is the protocol error code of a refusal.
	Code   string `json:"code,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Count is how many occurrences a coalesced event stands for (refused
	// authentications are batched); 0 or 1 means one.
	Count int `json:"count,omitempty"`
}

// AuditList answers GET /v1/audit. NextAfter is the seq to pass as
// `after` for the next page (0 when the page was not full).
type AuditList struct {
	Events    []AuditEvent `json:"events"`
	NextAfter uint64       `json:"next_after,omitempty"`
}
