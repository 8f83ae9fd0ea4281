package coordinator_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every refusal on the worker-admin and group routes answers with a
// protocol code and leaves the replicated state as it was.
func TestIdentityBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	h := f.h
	admin, worker, join := h.AdminToken, f.workerToken, h.JoinToken
	ctx := t.Context()
	ac := h.Client(t, admin)
	mustGroup(t, ac, "inner", workerRef("w1"))
	mustGroup(t, ac, "outer", groupRef("inner"))
	spec := execJob()
	spec.Target = &api.Target{Kind: api.TargetGroup, ID: "outer"}
	if _, err := ac.SubmitJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var many strings.Builder
	many.WriteString(`{"group_id":"big","members":[`)
	for i := range 1025 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"kind":"worker","id":"w%d"}`, i)
	}
	many.WriteString(`]}`)

	cases := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		status int
		code   api.Code
	}{
		// create
		{"create: malformed JSON", "POST", "/v1/groups", admin, `{"group_id":`, 400, api.CodeInvalidArgument},
		{"create: unknown field", "POST", "/v1/groups", admin, `{"group_id":"g","colour":"red"}`, 400, api.CodeInvalidArgument},
		{"create: empty body", "POST", "/v1/groups", admin, ``, 400, api.CodeInvalidArgument},
		{"create: no id", "POST", "/v1/groups", admin, `{"members":[]}`, 400, api.CodeInvalidArgument},
		{"create: bad id", "POST", "/v1/groups", admin, `{"group_id":"Bad Id"}`, 400, api.CodeInvalidArgument},
		{"create: id too long", "POST", "/v1/groups", admin, `{"group_id":"` + strings.Repeat("a", 65) + `"}`, 400, api.CodeInvalidArgument},
		{"create: reserved admin", "POST", "/v1/groups", admin, `{"group_id":"admin"}`, 400, api.CodeReservedIdentifier},
		{"create: reserved system", "POST", "/v1/groups", admin, `{"group_id":"system"}`, 400, api.CodeReservedIdentifier},
		{"create: reserved internal", "POST", "/v1/groups", admin, `{"group_id":"internal"}`, 400, api.CodeReservedIdentifier},
		{"create: reserved underscore", "POST", "/v1/groups", admin, `{"group_id":"_g"}`, 400, api.CodeReservedIdentifier},
		{"create: member kind", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"team","id":"a"}]}`, 400, api.CodeInvalidArgument},
		{"create: member reserved", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"worker","id":"system"}]}`, 400, api.CodeReservedIdentifier},
		{"create: member without id", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"worker"}]}`, 400, api.CodeInvalidArgument},
		{"create: too many members", "POST", "/v1/groups", admin, many.String(), 400, api.CodeInvalidArgument},
		{"create: unknown worker member", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"worker","id":"ghost"}]}`, 404, api.CodeNotFound},
		{"create: unknown group member", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"group","id":"ghost"}]}`, 404, api.CodeNotFound},
		{"create: itself as member", "POST", "/v1/groups", admin, `{"group_id":"g","members":[{"kind":"group","id":"g"}]}`, 409, api.CodeCycleDetected},
		{"create: duplicate id", "POST", "/v1/groups", admin, `{"group_id":"inner"}`, 409, api.CodeConflict},
		// add member
		{"add: unknown group", "POST", "/v1/groups/ghost/members", admin, `{"kind":"worker","id":"w1"}`, 404, api.CodeNotFound},
		{"add: reserved group", "POST", "/v1/groups/_x/members", admin, `{"kind":"worker","id":"w1"}`, 400, api.CodeReservedIdentifier},
		{"add: bad group id", "POST", "/v1/groups/Bad/members", admin, `{"kind":"worker","id":"w1"}`, 400, api.CodeInvalidArgument},
		{"add: empty body", "POST", "/v1/groups/inner/members", admin, ``, 400, api.CodeInvalidArgument},
		{"add: bad kind", "POST", "/v1/groups/inner/members", admin, `{"kind":"user","id":"w1"}`, 400, api.CodeInvalidArgument},
		{"add: unknown field", "POST", "/v1/groups/inner/members", admin, `{"kind":"worker","id":"w1","weight":2}`, 400, api.CodeInvalidArgument},
		{"add: unknown worker", "POST", "/v1/groups/inner/members", admin, `{"kind":"worker","id":"ghost"}`, 404, api.CodeNotFound},
		{"add: unknown group member", "POST", "/v1/groups/inner/members", admin, `{"kind":"group","id":"ghost"}`, 404, api.CodeNotFound},
		{"add: self", "POST", "/v1/groups/inner/members", admin, `{"kind":"group","id":"inner"}`, 409, api.CodeCycleDetected},
		{"add: cycle", "POST", "/v1/groups/inner/members", admin, `{"kind":"group","id":"outer"}`, 409, api.CodeCycleDetected},
		// remove member
		{"remove: unknown group", "DELETE", "/v1/groups/ghost/members/worker/w1", admin, ``, 404, api.CodeNotFound},
		{"remove: bad kind", "DELETE", "/v1/groups/inner/members/user/w1", admin, ``, 400, api.CodeInvalidArgument},
		{"remove: reserved member", "DELETE", "/v1/groups/inner/members/worker/admin", admin, ``, 400, api.CodeReservedIdentifier},
		{"remove: body", "DELETE", "/v1/groups/inner/members/worker/w1", admin, `{"why":"x"}`, 400, api.CodeInvalidArgument},
		// delete and read
		{"delete: unknown", "DELETE", "/v1/groups/ghost", admin, ``, 404, api.CodeNotFound},
		{"delete: contained", "DELETE", "/v1/groups/inner", admin, ``, 409, api.CodeConflict},
		{"delete: targeted", "DELETE", "/v1/groups/outer", admin, ``, 409, api.CodeConflict},
		{"get: unknown", "GET", "/v1/groups/ghost", admin, ``, 404, api.CodeNotFound},
		{"get: reserved", "GET", "/v1/groups/internal", admin, ``, 400, api.CodeReservedIdentifier},
		// worker admin
		{"reissue: unknown", "POST", "/v1/workers/ghost/reissue", admin, ``, 404, api.CodeNotFound},
		{"reissue: reserved", "POST", "/v1/workers/admin/reissue", admin, ``, 400, api.CodeReservedIdentifier},
		{"reissue: bad id", "POST", "/v1/workers/Bad/reissue", admin, ``, 400, api.CodeInvalidArgument},
		{"reissue: unknown field", "POST", "/v1/workers/w1/reissue", admin, `{"force":true}`, 400, api.CodeInvalidArgument},
		{"revoke: unknown", "POST", "/v1/workers/ghost/revoke", admin, ``, 404, api.CodeNotFound},
		{"revoke: reserved", "POST", "/v1/workers/_w/revoke", admin, ``, 400, api.CodeReservedIdentifier},
		{"revoke: trailing data", "POST", "/v1/workers/w1/revoke", admin, `{}{}`, 400, api.CodeInvalidArgument},
		// targets
		{"submit: unknown group target", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"target":{"kind":"group","id":"ghost"}}`, 404, api.CodeNotFound},
		{"submit: unknown worker target", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"target":{"kind":"worker","id":"ghost"}}`, 404, api.CodeNotFound},
		{"submit: reserved target", "POST", "/v1/jobs", admin, `{"executor":"exec","config":{"command":"x"},"target":{"kind":"group","id":"admin"}}`, 400, api.CodeReservedIdentifier},
		// credentials
		{"groups without a token", "GET", "/v1/groups", "", ``, 401, api.CodeUnauthenticated},
		{"groups with a worker token", "POST", "/v1/groups", worker, `{"group_id":"g"}`, 403, api.CodeForbidden},
		{"reissue with a join token", "POST", "/v1/workers/w1/reissue", join, ``, 403, api.CodeForbidden},
		{"revoke with a worker token", "POST", "/v1/workers/w1/revoke", worker, ``, 403, api.CodeForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, h)
			r := call(t, h.URL, c.method, c.path, c.token, []byte(c.body), nil)
			if r.status != c.status || r.body.Error == nil || r.body.Error.Code != c.code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.raw, c.status, c.code)
			}
			if r.body.Error.RequestID == "" || r.body.Error.Message == "" {
				t.Errorf("error body lacks request_id or message: %s", r.raw)
			}
			for _, secret := range []string{admin, worker, join} {
				if bytes.Contains(r.raw, []byte(secret)) {
					t.Errorf("answer echoes a token")
				}
			}
			if after := snapshot(t, h); !bytes.Equal(before, after) {
				t.Errorf("refused request changed the state")
			}
		})
	}
}
