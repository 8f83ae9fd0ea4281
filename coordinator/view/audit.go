package view

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// AuditEvent renders one audit event.
func AuditEvent(ev command.AuditEvent) api.AuditEvent {
	return api.AuditEvent{
		Seq: ev.Seq, Time: api.FormatTime(ev.Time), Kind: ev.Kind, Actor: ev.Actor,
		CredentialID: ev.CredentialID, CredentialKind: ev.CredentialKind, WorkerID: ev.WorkerID,
		Subject: ev.Subject, Team: ev.Team, Source: ev.Source, Route: ev.Route, Code: ev.Code, Detail: ev.Detail, Count: ev.Count,
	}
}

// AuditEvents renders a list of audit events, in its order.
func AuditEvents(evs []command.AuditEvent) []api.AuditEvent {
	return each(evs, AuditEvent)
}
