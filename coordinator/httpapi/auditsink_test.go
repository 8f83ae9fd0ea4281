package httpapi

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Finding 5: random credential ids must not defeat coalescing. Before,
// each distinct id was its own event, so one source sending garbage tokens
// wrote 256 events a second; now one source, route and code make one
// summary per interval, whatever ids it presents.
func TestSinkFoldsCallerChosenIDs(t *testing.T) {
	at := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	a := newAuditSink(nil, clock.Real{}, slog.New(slog.DiscardHandler), time.Second)
	const sources, perSource = 20, 500
	for src := range sources {
		for i := range perSource {
			a.add(command.AuditEvent{Time: at, Kind: "auth.refused", Code: string(api.CodeUnauthenticated), Route: "GET /v1/jobs",
				CredentialKind: "client", CredentialID: fmt.Sprintf("%016x", src*perSource+i), Source: fmt.Sprintf("198.51.100.%d", src)})
		}
		for i := range 3 {
			a.add(command.AuditEvent{Time: at, Kind: "enrollment.refused", Code: string(api.CodeEnrollmentRefused), Route: "POST /v1/workers/enroll",
				Subject: fmt.Sprintf("vm-%d-%d", src, i), Source: fmt.Sprintf("198.51.100.%d", src)})
		}
	}
	// A credential that authenticated keeps an event of its own.
	for _, id := range []string{"aaaa", "bbbb"} {
		a.add(command.AuditEvent{Time: at, Kind: "auth.refused", Code: string(api.CodeForbidden), Route: "GET /v1/audit",
			CredentialKind: "client", CredentialID: id, Actor: "ci-" + id, Source: "198.51.100.1"})
	}
	evs := a.take()
	if len(evs) != 2*sources+2 {
		t.Fatalf("%d events for %d sources, want %d", len(evs), sources, 2*sources+2)
	}
	total := map[string]int{}
	for _, ev := range evs {
		total[ev.Kind+" "+ev.Code] += ev.Count
		switch ev.Code {
		case string(api.CodeUnauthenticated):
			if ev.Count != perSource || ev.CredentialID != "" || !strings.Contains(ev.Detail, fmt.Sprintf("%d distinct ids", perSource)) {
				t.Fatalf("summary of one source: %+v", ev)
			}
			if len(ev.Detail) > 200 {
				t.Fatalf("summary detail grows with the ids: %d bytes", len(ev.Detail))
			}
		case string(api.CodeEnrollmentRefused):
			if ev.Count != 3 || ev.Subject != "" || !strings.HasPrefix(ev.Detail, "3 distinct ids presented: vm-") {
				t.Fatalf("enrollment summary: %+v", ev)
			}
		case string(api.CodeForbidden):
			if ev.Count != 1 || ev.CredentialID == "" || ev.Actor == "" {
				t.Fatalf("authenticated refusal lost its credential: %+v", ev)
			}
		}
	}
	if total["auth.refused unauthenticated"] != sources*perSource {
		t.Fatalf("counts %v", total)
	}
	if again := a.take(); len(again) != 0 {
		t.Fatalf("take did not empty the sink: %d", len(again))
	}
}

// One id presented many times keeps it in the id field.
func TestSinkKeepsASingleID(t *testing.T) {
	a := newAuditSink(nil, clock.Real{}, slog.New(slog.DiscardHandler), time.Second)
	for range 10 {
		a.add(command.AuditEvent{Kind: "auth.refused", Code: string(api.CodeUnauthenticated), CredentialID: "feed", Source: "192.0.2.1"})
	}
	evs := a.take()
	if len(evs) != 1 || evs[0].Count != 10 || evs[0].CredentialID != "feed" || evs[0].Detail != "" {
		t.Fatalf("%+v", evs)
	}
}

// A summary counts each caller-chosen id once, however often it comes
// back (an id past the named few included), and says "at least" once it
// stops telling ids apart.
func TestSinkCountsDistinctIDsOnce(t *testing.T) {
	at := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		ids     int // distinct ids, each presented three times
		count   int
		wantHas string
	}{
		{"a few past the named ones", 6, 18, "6 distinct ids presented: "},
		{"past the counting cap", maxCountedIDs + 50, 3 * (maxCountedIDs + 50), fmt.Sprintf("at least %d distinct ids presented: ", maxCountedIDs)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAuditSink(nil, clock.Real{}, slog.New(slog.DiscardHandler), time.Second)
			for range 3 {
				for i := range c.ids {
					a.add(command.AuditEvent{Time: at, Kind: "auth.refused", Code: string(api.CodeUnauthenticated), Route: "GET /v1/jobs",
						CredentialKind: "client", CredentialID: fmt.Sprintf("%016x", i), Source: "198.51.100.7"})
				}
			}
			evs := a.take()
			if len(evs) != 1 || evs[0].Count != c.count || !strings.Contains(evs[0].Detail, c.wantHas) {
				t.Fatalf("summary: %+v, want count %d and %q", evs, c.count, c.wantHas)
			}
		})
	}
}
