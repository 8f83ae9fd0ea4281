package state

import "github.com/gpulayer/gpulayer/coordinator/command"

// Audit events, up to the log's retention of them (S6: 10,000), are
// written and read directly too, as go-msgpack writes them
// (TestAuditRecordBytesMatchTheCodec).

// appendAudit appends an audit event's record as go-msgpack writes it.
func (w *recordWriter) appendAudit(b []byte, ev *command.AuditEvent) []byte {
	r := &w.audit
	r.reset()
	r.optStr("actor", ev.Actor)
	r.optStr("code", ev.Code)
	r.optInt("count", int64(ev.Count))
	r.optStr("credential_id", ev.CredentialID)
	r.optStr("credential_kind", ev.CredentialKind)
	r.optStr("detail", ev.Detail)
	r.str("kind", ev.Kind)
	r.optStr("route", ev.Route)
	if ev.Seq != 0 {
		r.uint("seq", ev.Seq)
	}
	r.optStr("source", ev.Source)
	r.optStr("subject", ev.Subject)
	r.time("time", ev.Time)
	r.optStr("worker_id", ev.WorkerID)
	out, _ := r.appendTo(b) // nothing nested: no error
	return out
}

// audit reads an audit event's record.
func (d *recordReader) audit(body []byte) (command.AuditEvent, bool) {
	r := &mpReader{b: body, ok: true}
	var ev command.AuditEvent
	var seen fields
	for n := r.mapLen(); n > 0 && r.ok; n-- {
		switch string(r.strBytes()) {
		case "actor":
			r.ok = r.ok && seen.first(0)
			ev.Actor = d.str(r)
		case "code":
			r.ok = r.ok && seen.first(1)
			ev.Code = d.str(r)
		case "count":
			r.ok = r.ok && seen.first(2)
			ev.Count = r.intN()
		case "credential_id":
			r.ok = r.ok && seen.first(3)
			ev.CredentialID = d.str(r)
		case "credential_kind":
			r.ok = r.ok && seen.first(4)
			ev.CredentialKind = d.str(r)
		case "detail":
			r.ok = r.ok && seen.first(5)
			ev.Detail = plain(r)
		case "kind":
			r.ok = r.ok && seen.first(6)
			ev.Kind = d.str(r)
		case "route":
			r.ok = r.ok && seen.first(7)
			ev.Route = d.str(r)
		case "seq":
			r.ok = r.ok && seen.first(8)
			ev.Seq = r.uint()
		case "source":
			r.ok = r.ok && seen.first(9)
			ev.Source = d.str(r)
		case "subject":
			r.ok = r.ok && seen.first(10)
			ev.Subject = plain(r)
		case "time":
			r.ok = r.ok && seen.first(11)
			ev.Time = r.time()
		case "worker_id":
			r.ok = r.ok && seen.first(12)
			ev.WorkerID = d.str(r)
		default:
			r.ok = false
		}
	}
	return ev, r.ok && r.i == len(body)
}
