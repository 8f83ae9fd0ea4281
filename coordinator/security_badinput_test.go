package coordinator_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every refusal on the token, enrollment, approval, audit and artifact
// routes answers with a protocol code and leaves the replicated state as
// it was (the audit log aside: refusals are audited by design).
func TestSecurityBadInputIsRefusedAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	h := f.h
	ctx := t.Context()
	admin, worker, join := h.AdminToken, f.workerToken, h.JoinToken
	ac := h.Client(t, admin)
	mintClient(t, h, "dup", "read")
	allowlist(t, ac, "lab", []string{"203.0.113.0/24"}, map[string]string{"vm-1": "203.0.113.5"})
	if _, err := ac.PutArtifact(ctx, digest([]byte("x")), []byte("x")); err != nil {
		t.Fatal(err)
	}
	workerCredID := strings.Split(worker, "_")[1]
	good := digest([]byte("good"))
	many := `{"kind":"join","name":"j","labels":{` + strings.Repeat(`"k":"v",`, 0)
	for i := range 65 {
		if i > 0 {
			many += ","
		}
		many += `"k` + strings.Repeat("x", i) + `":"v"`
	}
	many += `}}`

	cases := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		header map[string]string
		status int
		code   api.Code
	}{
		// POST /v1/tokens
		{"token: malformed JSON", "POST", "/v1/tokens", admin, `{"kind":`, nil, 400, api.CodeInvalidArgument},
		{"token: unknown field", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","scope":"all"}`, nil, 400, api.CodeInvalidArgument},
		{"token: empty body", "POST", "/v1/tokens", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"token: no kind", "POST", "/v1/tokens", admin, `{"name":"a"}`, nil, 400, api.CodeInvalidArgument},
		{"token: unknown kind", "POST", "/v1/tokens", admin, `{"kind":"root","name":"a"}`, nil, 400, api.CodeInvalidArgument},
		{"token: worker kind", "POST", "/v1/tokens", admin, `{"kind":"worker","name":"a"}`, nil, 400, api.CodeInvalidArgument},
		{"token: instance kind here", "POST", "/v1/tokens", admin, `{"kind":"instance","name":"a"}`, nil, 400, api.CodeInvalidArgument},
		{"token: no name", "POST", "/v1/tokens", admin, `{"kind":"client"}`, nil, 400, api.CodeInvalidArgument},
		{"token: bad name", "POST", "/v1/tokens", admin, `{"kind":"client","name":"two words"}`, nil, 400, api.CodeInvalidArgument},
		{"token: long name", "POST", "/v1/tokens", admin, `{"kind":"client","name":"` + strings.Repeat("n", 65) + `"}`, nil, 400, api.CodeInvalidArgument},
		{"token: reserved admin", "POST", "/v1/tokens", admin, `{"kind":"client","name":"admin"}`, nil, 400, api.CodeReservedIdentifier},
		{"token: reserved system", "POST", "/v1/tokens", admin, `{"kind":"join","name":"SYSTEM"}`, nil, 400, api.CodeReservedIdentifier},
		{"token: reserved underscore", "POST", "/v1/tokens", admin, `{"kind":"client","name":"_root"}`, nil, 400, api.CodeReservedIdentifier},
		{"token: unknown role", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","roles":["owner"]}`, nil, 400, api.CodeInvalidArgument},
		{"token: roles on a join token", "POST", "/v1/tokens", admin, `{"kind":"join","name":"a","roles":["read"]}`, nil, 400, api.CodeInvalidArgument},
		{"token: max_uses on a client token", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","max_uses":1}`, nil, 400, api.CodeInvalidArgument},
		{"token: approval on a client token", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","requires_approval":true}`, nil, 400, api.CodeInvalidArgument},
		{"token: negative max_uses", "POST", "/v1/tokens", admin, `{"kind":"join","name":"a","max_uses":-1}`, nil, 400, api.CodeInvalidArgument},
		{"token: negative expiry", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","expires_in_seconds":-5}`, nil, 400, api.CodeInvalidArgument},
		{"token: expiry too far", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","expires_in_seconds":999999999999}`, nil, 400, api.CodeInvalidArgument},
		{"token: expiry not a number", "POST", "/v1/tokens", admin, `{"kind":"client","name":"a","expires_in_seconds":"1h"}`, nil, 400, api.CodeInvalidArgument},
		{"token: bad group", "POST", "/v1/tokens", admin, `{"kind":"join","name":"a","groups":["Bad Group"]}`, nil, 400, api.CodeInvalidArgument},
		{"token: reserved group", "POST", "/v1/tokens", admin, `{"kind":"join","name":"a","groups":["internal"]}`, nil, 400, api.CodeReservedIdentifier},
		{"token: unknown group", "POST", "/v1/tokens", admin, `{"kind":"join","name":"a","groups":["ghost"]}`, nil, 404, api.CodeNotFound},
		{"token: too many labels", "POST", "/v1/tokens", admin, many, nil, 400, api.CodeInvalidArgument},
		{"token: live name taken", "POST", "/v1/tokens", admin, `{"kind":"client","name":"dup"}`, nil, 409, api.CodeConflict},
		{"token: by a submit client", "POST", "/v1/tokens", mintClient(t, h, "sub", "submit"), `{"kind":"client","name":"a"}`, nil, 403, api.CodeForbidden},
		{"token: by a worker", "POST", "/v1/tokens", worker, `{"kind":"client","name":"a"}`, nil, 403, api.CodeForbidden},
		{"token: by a join token", "POST", "/v1/tokens", join, `{"kind":"join","name":"a"}`, nil, 403, api.CodeForbidden},
		// GET and DELETE /v1/tokens/{id}
		{"token get: bad id", "GET", "/v1/tokens/xyz", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"token get: unknown", "GET", "/v1/tokens/0123456789abcdef", admin, ``, nil, 404, api.CodeNotFound},
		{"token get: a worker credential", "GET", "/v1/tokens/" + workerCredID, admin, ``, nil, 404, api.CodeNotFound},
		{"token list: bad kind", "GET", "/v1/tokens?kind=root", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"token revoke: bad id", "DELETE", "/v1/tokens/NOTHEX0123456789", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"token revoke: unknown", "DELETE", "/v1/tokens/0123456789abcdef", admin, ``, nil, 404, api.CodeNotFound},
		{"token revoke: a worker credential", "DELETE", "/v1/tokens/" + workerCredID, admin, ``, nil, 404, api.CodeNotFound},
		{"token revoke: body", "DELETE", "/v1/tokens/0123456789abcdef", admin, `{"why":"x"}`, nil, 400, api.CodeInvalidArgument},
		// POST /v1/instance-tokens
		{"instance: no instance id", "POST", "/v1/instance-tokens", admin, `{}`, nil, 400, api.CodeInvalidArgument},
		{"instance: bad instance id", "POST", "/v1/instance-tokens", admin, `{"instance_id":"has space"}`, nil, 400, api.CodeInvalidArgument},
		{"instance: reserved name", "POST", "/v1/instance-tokens", admin, `{"instance_id":"i-1","name":"admin"}`, nil, 400, api.CodeReservedIdentifier},
		{"instance: negative expiry", "POST", "/v1/instance-tokens", admin, `{"instance_id":"i-1","expires_in_seconds":-1}`, nil, 400, api.CodeInvalidArgument},
		{"instance: unknown field", "POST", "/v1/instance-tokens", admin, `{"instance_id":"i-1","uses":3}`, nil, 400, api.CodeInvalidArgument},
		// register
		{"register: origin unknown", "POST", "/v1/workers/register", join, `{"worker_id":"x1","origin":"cloud"}`, nil, 400, api.CodeInvalidArgument},
		{"register: instance id with a join token", "POST", "/v1/workers/register", join, `{"worker_id":"x1","instance_id":"i-1"}`, nil, 400, api.CodeInvalidArgument},
		// clusters
		{"cluster: malformed", "POST", "/v1/clusters", admin, `{"cluster_key":`, nil, 400, api.CodeInvalidArgument},
		{"cluster: no key", "POST", "/v1/clusters", admin, `{"allowed_source_cidrs":["10.0.0.0/8"]}`, nil, 400, api.CodeInvalidArgument},
		{"cluster: reserved key", "POST", "/v1/clusters", admin, `{"cluster_key":"admin","allowed_source_cidrs":["10.0.0.0/8"]}`, nil, 400, api.CodeReservedIdentifier},
		{"cluster: no networks", "POST", "/v1/clusters", admin, `{"cluster_key":"c2","allowed_source_cidrs":[]}`, nil, 400, api.CodeInvalidArgument},
		{"cluster: bad network", "POST", "/v1/clusters", admin, `{"cluster_key":"c2","allowed_source_cidrs":["10.0.0.0/33"]}`, nil, 400, api.CodeInvalidArgument},
		{"cluster: host bits set", "POST", "/v1/clusters", admin, `{"cluster_key":"c2","allowed_source_cidrs":["10.1.2.3/8"]}`, nil, 400, api.CodeInvalidArgument},
		{"cluster: not a network", "POST", "/v1/clusters", admin, `{"cluster_key":"c2","allowed_source_cidrs":["example.com"]}`, nil, 400, api.CodeInvalidArgument},
		{"cluster: strands a row", "POST", "/v1/clusters", admin, `{"cluster_key":"lab","allowed_source_cidrs":["198.51.100.0/24"]}`, nil, 409, api.CodeConflict},
		{"cluster get: unknown", "GET", "/v1/clusters/ghost", admin, ``, nil, 404, api.CodeNotFound},
		{"cluster get: bad key", "GET", "/v1/clusters/Bad", admin, ``, nil, 400, api.CodeInvalidArgument},
		// enrollments
		{"row: unknown cluster", "POST", "/v1/enrollments", admin, `{"cluster_key":"ghost","external_worker_key":"k","public_ip":"203.0.113.9"}`, nil, 404, api.CodeNotFound},
		{"row: outside its cluster", "POST", "/v1/enrollments", admin, `{"cluster_key":"lab","external_worker_key":"k","public_ip":"198.51.100.9"}`, nil, 400, api.CodeInvalidArgument},
		{"row: bad address", "POST", "/v1/enrollments", admin, `{"cluster_key":"lab","external_worker_key":"k","public_ip":"203.0.113.999"}`, nil, 400, api.CodeInvalidArgument},
		{"row: a range", "POST", "/v1/enrollments", admin, `{"cluster_key":"lab","external_worker_key":"k","public_ip":"203.0.113.0/24"}`, nil, 400, api.CodeInvalidArgument},
		{"row: bad key", "POST", "/v1/enrollments", admin, `{"cluster_key":"lab","external_worker_key":"has/slash","public_ip":"203.0.113.9"}`, nil, 400, api.CodeInvalidArgument},
		{"row: duplicate key", "POST", "/v1/enrollments", admin, `{"cluster_key":"lab","external_worker_key":"vm-1","public_ip":"203.0.113.9"}`, nil, 409, api.CodeConflict},
		{"row get: unknown", "GET", "/v1/enrollments/ghost", admin, ``, nil, 404, api.CodeNotFound},
		{"row revoke: unknown", "POST", "/v1/enrollments/ghost/revoke", admin, ``, nil, 404, api.CodeNotFound},
		{"row revoke: body", "POST", "/v1/enrollments/vm-1/revoke", admin, `{"force":true}`, nil, 400, api.CodeInvalidArgument},
		// enroll
		{"enroll: malformed", "POST", "/v1/workers/enroll", "", `{"cluster_key":`, from("203.0.113.5"), 400, api.CodeInvalidArgument},
		{"enroll: no keys", "POST", "/v1/workers/enroll", "", `{}`, from("203.0.113.5"), 400, api.CodeInvalidArgument},
		{"enroll: unknown field", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1","token":"x"}`, from("203.0.113.5"), 400, api.CodeInvalidArgument},
		{"enroll: reserved worker id", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1","worker_id":"system"}`, from("203.0.113.5"), 400, api.CodeReservedIdentifier},
		{"enroll: bad worker id", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1","worker_id":"No"}`, from("203.0.113.5"), 400, api.CodeInvalidArgument},
		{"enroll: no determinable address", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1"}`, map[string]string{"X-Forwarded-For": ","}, 400, api.CodeInvalidArgument},
		{"enroll: body address ignored", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1","public_ip":"203.0.113.5"}`, from("198.51.100.3"), 403, api.CodeEnrollmentRefused},
		{"enroll: unknown cluster", "POST", "/v1/workers/enroll", "", `{"cluster_key":"ghost","external_worker_key":"vm-1"}`, from("203.0.113.5"), 403, api.CodeEnrollmentRefused},
		{"enroll: worker id taken", "POST", "/v1/workers/enroll", "", `{"cluster_key":"lab","external_worker_key":"vm-1","worker_id":"w1"}`, from("203.0.113.5"), 409, api.CodeConflict},
		// approve
		{"approve: unknown", "POST", "/v1/workers/ghost/approve", admin, ``, nil, 404, api.CodeNotFound},
		{"approve: reserved", "POST", "/v1/workers/_w/approve", admin, ``, nil, 400, api.CodeReservedIdentifier},
		{"approve: body", "POST", "/v1/workers/w1/approve", admin, `{"now":true}`, nil, 400, api.CodeInvalidArgument},
		{"approve: by a worker", "POST", "/v1/workers/w1/approve", worker, ``, nil, 403, api.CodeForbidden},
		// audit
		{"audit: bad since", "GET", "/v1/audit?since=yesterday", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"audit: bad until", "GET", "/v1/audit?until=2026-13-01T00:00:00Z", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"audit: limit 0", "GET", "/v1/audit?limit=0", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"audit: limit too high", "GET", "/v1/audit?limit=100001", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"audit: bad after", "GET", "/v1/audit?after=-1", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"audit: without a token", "GET", "/v1/audit", "", ``, nil, 401, api.CodeUnauthenticated},
		// artifacts
		{"artifact put: short digest", "PUT", "/v1/artifacts/abc", admin, `x`, nil, 400, api.CodeInvalidArgument},
		{"artifact put: upper-case digest", "PUT", "/v1/artifacts/" + strings.ToUpper(good), admin, `good`, nil, 400, api.CodeInvalidArgument},
		{"artifact put: body does not match", "PUT", "/v1/artifacts/" + good, admin, `not good`, nil, 400, api.CodeInvalidArgument},
		{"artifact put: by a worker", "PUT", "/v1/artifacts/" + good, worker, `good`, nil, 403, api.CodeForbidden},
		{"artifact get: bad digest", "GET", "/v1/artifacts/zz", admin, ``, nil, 400, api.CodeInvalidArgument},
		{"artifact get: unknown", "GET", "/v1/artifacts/" + good, admin, ``, nil, 404, api.CodeNotFound},
		{"artifact get: a worker without the input", "GET", "/v1/artifacts/" + digest([]byte("x")), worker, ``, nil, 404, api.CodeNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, h)
			r := call(t, h.URL, c.method, c.path, c.token, []byte(c.body), c.header)
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
