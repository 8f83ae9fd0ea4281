package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Attack tests of the third outside review (docs/security.md, "Third
// review: HTTP and CLI findings"). Each failed before its fix.

// F1: a second X-GpuLayer-Protocol header that disagrees with the first is
// refused whatever the order; the same value twice is one value.
func TestFindingProtocolHeaderRepeated(t *testing.T) {
	rig := newFindingRig(t)
	for _, tc := range []struct {
		name   string
		values []string
		status int
	}{
		{"one", []string{"1"}, http.StatusOK},
		{"same twice", []string{"1", "1"}, http.StatusOK},
		{"good then bad", []string{"1", "2"}, http.StatusBadRequest},
		{"bad then good", []string{"2", "1"}, http.StatusBadRequest},
		{"empty then good", []string{"", "1"}, http.StatusBadRequest},
		{"list in one", []string{"1, 2"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := rig.do(findingCall{method: "GET", path: "/v1/jobs", token: rig.admin, header: http.Header{api.ProtocolHeader: tc.values}})
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusOK && errorCode(rec) != api.CodeProtocolMismatch {
				t.Fatalf("code %q, want %q", errorCode(rec), api.CodeProtocolMismatch)
			}
		})
	}
}

// F2: the Bearer scheme is matched without regard to case (RFC 9110
// 11.1); anything else, or two Authorization headers, is 401.
func TestFindingBearerSchemeCase(t *testing.T) {
	rig := newFindingRig(t)
	for _, tc := range []struct {
		name   string
		values []string
		status int
	}{
		{"Bearer", []string{"Bearer " + rig.admin}, http.StatusOK},
		{"bearer", []string{"bearer " + rig.admin}, http.StatusOK},
		{"BEARER", []string{"BEARER " + rig.admin}, http.StatusOK},
		{"mixed", []string{"bEaReR " + rig.admin}, http.StatusOK},
		{"two spaces", []string{"Bearer  " + rig.admin}, http.StatusOK},
		{"no space", []string{"Bearer" + rig.admin}, http.StatusUnauthorized},
		{"basic", []string{"Basic " + rig.admin}, http.StatusUnauthorized},
		{"scheme only", []string{"bearer"}, http.StatusUnauthorized},
		{"two headers", []string{"Bearer " + rig.admin, "Bearer " + rig.join}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := rig.do(findingCall{method: "GET", path: "/v1/jobs", header: http.Header{"Authorization": tc.values}})
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusOK && errorCode(rec) != api.CodeUnauthenticated {
				t.Fatalf("code %q, want %q", errorCode(rec), api.CodeUnauthenticated)
			}
		})
	}
}

// F3: every query a route reads is parsed strictly: a malformed cursor,
// limit or flag, a parameter given twice, one the route does not take, or
// a query that does not parse is 400 invalid_argument, never ignored.
func TestFindingMalformedQuery(t *testing.T) {
	rig := newFindingRig(t)
	cursor := jobCursor(1)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/jobs?after=", http.StatusOK},
		{"/v1/jobs?after=" + cursor + "&limit=5", http.StatusOK},
		{"/v1/jobs?after=!!!", http.StatusBadRequest},
		{"/v1/jobs?after=" + cursor + "&after=!!!", http.StatusBadRequest},
		{"/v1/jobs?after=!!!&after=" + cursor, http.StatusBadRequest},
		{"/v1/jobs?limit=5&limit=x", http.StatusBadRequest},
		{"/v1/jobs?limit=5&limit=5", http.StatusBadRequest},
		{"/v1/jobs?cursor=x", http.StatusBadRequest},
		{"/v1/jobs?after=%zz", http.StatusBadRequest},
		{"/v1/audit?after=1&limit=10", http.StatusOK},
		{"/v1/audit?after=x", http.StatusBadRequest},
		{"/v1/audit?after=1&after=x", http.StatusBadRequest},
		{"/v1/audit?limit=10&limit=abc", http.StatusBadRequest},
		{"/v1/audit?since=2020-01-01T00:00:00Z&since=bad", http.StatusBadRequest},
		{"/v1/audit?%zz", http.StatusBadRequest},
		{"/v1/jobs/j1/logs", http.StatusOK},
		{"/v1/jobs/j1/logs?follow=0", http.StatusOK},
		{"/v1/jobs/j1/logs?follow=maybe", http.StatusBadRequest},
		{"/v1/jobs/j1/logs?follow=0&follow=1", http.StatusBadRequest},
		{"/v1/jobs/j1/logs?after=x", http.StatusBadRequest},
		{"/v1/jobs/j1/logs?limit=x", http.StatusBadRequest},
		{"/v1/jobs/j1/logs?limit=10", http.StatusBadRequest},
		{"/v1/tokens", http.StatusOK},
		{"/v1/tokens?kind=", http.StatusOK},
		{"/v1/tokens?kind=join", http.StatusOK},
		{"/v1/tokens?kind=root", http.StatusBadRequest},
		{"/v1/tokens?kind=join&kind=join", http.StatusBadRequest},
		{"/v1/tokens?kind=join&kind=root", http.StatusBadRequest},
		{"/v1/tokens?kinds=join", http.StatusBadRequest},
		{"/v1/tokens?%zz", http.StatusBadRequest},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rec := rig.do(findingCall{method: "GET", path: tc.path, token: rig.admin})
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusOK && errorCode(rec) != api.CodeInvalidArgument {
				t.Fatalf("code %q, want %q", errorCode(rec), api.CodeInvalidArgument)
			}
		})
	}
}

// F4: every JSON answer, and the log stream, carries
// X-Content-Type-Options: nosniff, errors included.
func TestFindingNoSniff(t *testing.T) {
	rig := newFindingRig(t)
	for _, tc := range []struct {
		name string
		call findingCall
	}{
		{"health", findingCall{method: "GET", path: "/v1/status/health"}},
		{"jobs", findingCall{method: "GET", path: "/v1/jobs", token: rig.admin}},
		{"logs", findingCall{method: "GET", path: "/v1/jobs/j1/logs", token: rig.admin}},
		{"unauthenticated", findingCall{method: "GET", path: "/v1/jobs"}},
		{"protocol mismatch", findingCall{method: "GET", path: "/v1/jobs", token: rig.admin, header: http.Header{api.ProtocolHeader: {"9"}}}},
		{"not found", findingCall{method: "GET", path: "/v1/jobs/nope", token: rig.admin}},
		{"bad body", findingCall{method: "POST", path: "/v1/jobs", token: rig.admin, body: "{"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := rig.do(tc.call)
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Fatalf("status %d: X-Content-Type-Options %q, want nosniff", rec.Code, got)
			}
		})
	}
}

// F12: registering an id that exists answers nothing of that worker (no
// record, no status, no credential), counts no use of the token and
// proposes nothing.
func TestFindingRegisterExistingIDRevealsNothing(t *testing.T) {
	rig := newFindingRig(t)
	before, _ := rig.store.Credential(rig.joinID)
	rec := rig.do(findingCall{method: "POST", path: "/v1/workers/register", token: rig.join, body: `{"worker_id":"w1"}`})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", rec.Code, rec.Body)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if len(body) != 1 || string(body["worker_id"]) != `"w1"` {
		t.Fatalf("answer %s: want only the worker_id the caller sent", rec.Body)
	}
	if strings.Contains(rec.Body.String(), "rack-7") {
		t.Fatalf("answer leaks the worker's labels: %s", rec.Body)
	}
	after, _ := rig.store.Credential(rig.joinID)
	if after.Uses != before.Uses {
		t.Fatalf("token uses %d -> %d", before.Uses, after.Uses)
	}
	if n := len(proposed[command.RegisterWorker](rig)); n != 0 {
		t.Fatalf("%d RegisterWorker proposals for an existing id", n)
	}
	// A new id still registers, once, and counts one use.
	rec = rig.do(findingCall{method: "POST", path: "/v1/workers/register", token: rig.join, body: `{"worker_id":"w2"}`})
	if rec.Code != http.StatusCreated {
		t.Fatalf("new id: status %d: %s", rec.Code, rec.Body)
	}
	if after, _ := rig.store.Credential(rig.joinID); after.Uses != before.Uses+1 {
		t.Fatalf("token uses %d -> %d after a new registration", before.Uses, after.Uses)
	}
}
