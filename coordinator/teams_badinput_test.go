package coordinator_test

import (
	"bytes"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Every bad team write gets its contract code and leaves the state as it
// was.
func TestTeamRoutesRefuseBadInput(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	ctx := t.Context()
	admin := h.Client(t, h.AdminToken)
	if _, err := admin.CreateTeam(ctx, api.CreateTeamRequest{Name: "vision"}); err != nil {
		t.Fatal(err)
	}
	busy := mintTeamClient(t, h, "busy", "vision", "submit")
	if _, err := h.Client(t, busy).SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}); err != nil {
		t.Fatal(err)
	}
	reader := mintTeamClient(t, h, "reader", "vision", "read")
	cases := []struct {
		name, method, path, token, body string
		status                          int
		code                            api.Code
	}{
		{"no name", "POST", "/v1/teams", "", `{}`, 400, api.CodeInvalidArgument},
		{"a name off the grammar", "POST", "/v1/teams", "", `{"name":"a b"}`, 400, api.CodeInvalidArgument},
		{"a reserved name", "POST", "/v1/teams", "", `{"name":"admin"}`, 400, api.CodeReservedIdentifier},
		{"an unknown field", "POST", "/v1/teams", "", `{"name":"x","colour":"red"}`, 400, api.CodeInvalidArgument},
		{"weight 0", "POST", "/v1/teams", "", `{"name":"x","weight":0}`, 400, api.CodeInvalidArgument},
		{"a negative weight", "POST", "/v1/teams", "", `{"name":"x","weight":-1}`, 400, api.CodeInvalidArgument},
		{"a weight past the bound", "POST", "/v1/teams", "", `{"name":"x","weight":1001}`, 400, api.CodeInvalidArgument},
		{"a weight finer than 1/100", "POST", "/v1/teams", "", `{"name":"x","weight":0.001}`, 400, api.CodeInvalidArgument},
		{"a negative quota", "POST", "/v1/teams", "", `{"name":"x","quota":{"gpus":-1}}`, 400, api.CodeInvalidArgument},
		{"a quota finer than 1/100", "POST", "/v1/teams", "", `{"name":"x","quota":{"gpus":1.234}}`, 400, api.CodeInvalidArgument},
		{"a quota of the wrong type", "POST", "/v1/teams", "", `{"name":"x","quota":{"gpus":"4"}}`, 400, api.CodeInvalidArgument},
		{"a borrow limit past the bound", "POST", "/v1/teams", "", `{"name":"x","borrow_limit":{"gpus":1e9}}`, 400, api.CodeInvalidArgument},
		{"a negative artifact quota", "POST", "/v1/teams", "", `{"name":"x","quota":{"artifact_bytes":-1}}`, 400, api.CodeInvalidArgument},
		{"an artifact quota past the bound", "POST", "/v1/teams", "", `{"name":"x","quota":{"artifact_bytes":1125899906842625}}`, 400, api.CodeInvalidArgument},
		{"an artifact quota of bytes and a half", "POST", "/v1/teams", "", `{"name":"x","quota":{"artifact_bytes":1.5}}`, 400, api.CodeInvalidArgument},
		{"an artifact quota of the wrong type", "POST", "/v1/teams", "", `{"name":"x","quota":{"artifact_bytes":"1GiB"}}`, 400, api.CodeInvalidArgument},
		{"an artifact quota given and cleared", "PATCH", "/v1/teams/vision", "", `{"quota":{"artifact_bytes":5},"clear_artifact_quota":true}`, 400, api.CodeInvalidArgument},
		{"an empty quota", "PATCH", "/v1/teams/vision", "", `{"quota":{}}`, 400, api.CodeInvalidArgument},
		{"an existing team", "POST", "/v1/teams", "", `{"name":"vision"}`, 409, api.CodeConflict},
		{"default again", "POST", "/v1/teams", "", `{"name":"default"}`, 409, api.CodeConflict},
		{"not an admin", "POST", "/v1/teams", reader, `{"name":"x"}`, 403, api.CodeForbidden},
		{"patch an unknown team", "PATCH", "/v1/teams/nope", "", `{"weight":2}`, 404, api.CodeNotFound},
		{"patch nothing", "PATCH", "/v1/teams/vision", "", `{}`, 400, api.CodeInvalidArgument},
		{"a limit given and cleared", "PATCH", "/v1/teams/vision", "", `{"borrow_limit":{"gpus":1},"clear_borrow_limit":true}`, 400, api.CodeInvalidArgument},
		{"patch a bad name", "PATCH", "/v1/teams/a%20b", "", `{"weight":2}`, 400, api.CodeInvalidArgument},
		{"read another team", "GET", "/v1/teams/default", reader, ``, 404, api.CodeNotFound},
		{"read an unknown team", "GET", "/v1/teams/nope", "", ``, 404, api.CodeNotFound},
		{"delete default", "DELETE", "/v1/teams/default", "", ``, 409, api.CodeConflict},
		{"delete a team with an unfinished job", "DELETE", "/v1/teams/vision", "", ``, 409, api.CodeConflict},
		{"delete with a body", "DELETE", "/v1/teams/vision", "", `{"force":true}`, 400, api.CodeInvalidArgument},
		{"a token in an unknown team", "POST", "/v1/tokens", "", `{"kind":"client","name":"t1","team":"nope"}`, 404, api.CodeNotFound},
		{"a token in a team off the grammar", "POST", "/v1/tokens", "", `{"kind":"client","name":"t1","team":"a b"}`, 400, api.CodeInvalidArgument},
		{"a join token in a team", "POST", "/v1/tokens", "", `{"kind":"join","name":"t1","team":"vision"}`, 400, api.CodeInvalidArgument},
	}
	for _, c := range cases {
		before := snapshot(t, h)
		tok := c.token
		if tok == "" {
			tok = h.AdminToken
		}
		var body []byte
		if c.body != "" {
			body = []byte(c.body)
		}
		wantCode(t, c.name, call(t, h.URL, c.method, c.path, tok, body, nil), c.status, c.code)
		if !bytes.Equal(before, snapshot(t, h)) {
			t.Errorf("%s: a refused write changed the state", c.name)
		}
	}
}
