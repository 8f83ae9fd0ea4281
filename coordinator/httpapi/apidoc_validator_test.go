package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The answer check bites: answers that break the description in each
// way it can be broken are refused, and the same answers made right
// pass, so a clean run of TestRealAnswersMatchAPIDescription means
// something.
func TestAPIValidatorCatchesWrongAnswers(t *testing.T) {
	raw, err := httpapi.APIDescriptionForTest()
	if err != nil {
		t.Fatal(err)
	}
	v := newAPIValidator(t, raw)
	job, err := json.Marshal(api.JobResponse{Job: api.Job{JobSpec: api.JobSpec{Executor: "exec"}, ID: "j1", State: "pending", CreatedBy: "admin",
		CreatedAt: "2026-12-02T13:00:00.123Z", UpdatedAt: "2026-12-02T13:00:00.123Z", Tasks: []api.Task{}}})
	if err != nil {
		t.Fatal(err)
	}
	errBody := `{"error":{"code":"not_found","message":"no job","request_id":"r1"}}`
	line := `{"task_id":"j1-0","index":0,"attempt":1,"stream":"stdout","seq":1,"data":"hi"}`
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	cases := []struct {
		name, method, path string
		status             int
		header             http.Header
		body               string
		valid              bool
	}{
		{"a real job answer", "GET", "/v1/jobs/j1", 200, jsonCT, string(job), true},
		{"a field of the wrong type", "GET", "/v1/jobs/j1", 200, jsonCT, strings.Replace(string(job), `"id":"j1"`, `"id":1`, 1), false},
		{"a required field missing", "GET", "/v1/jobs/j1", 200, jsonCT, strings.Replace(string(job), `"state":"pending",`, ``, 1), false},
		{"a field the type lacks", "GET", "/v1/jobs/j1", 200, jsonCT, strings.Replace(string(job), `"id":"j1"`, `"id":"j1","secret_hash":"x"`, 1), false},
		{"another route's answer", "GET", "/v1/jobs/j1", 200, jsonCT, `{"workers":[]}`, false},
		{"a status the route does not answer", "GET", "/v1/jobs/j1", 418, jsonCT, errBody, false},
		{"a content type the route does not answer", "GET", "/v1/jobs/j1", 200, http.Header{"Content-Type": {"text/html"}}, "<p>hi</p>", false},
		{"the error shape", "GET", "/v1/jobs/j1", 404, jsonCT, errBody, true},
		{"an error without its code", "GET", "/v1/jobs/j1", 404, jsonCT, `{"error":{"message":"no job"}}`, false},
		{"an error code the protocol lacks", "GET", "/v1/jobs/j1", 404, jsonCT, strings.Replace(errBody, "not_found", "gone", 1), false},
		{"a log stream", "GET", "/v1/jobs/j1/logs", 200, http.Header{"Content-Type": {"application/x-ndjson"}}, line + "\n" + line + "\n", true},
		{"a log line of the wrong shape", "GET", "/v1/jobs/j1/logs", 200, http.Header{"Content-Type": {"application/x-ndjson"}}, line + "\n" + `{"seq":"one"}` + "\n", false},
		{"null where the type allows none", "POST", "/v1/workers/self/heartbeat", 200, jsonCT, `{"cancel_task_ids":null,"command":"none","revoked":null,"interval_seconds":5}`, false},
		{"a heartbeat answer", "POST", "/v1/workers/self/heartbeat", 200, jsonCT, `{"cancel_task_ids":null,"command":"none","revoked":false,"interval_seconds":5}`, true},
		{"a route the description lacks", "GET", "/v1/nowhere", 200, jsonCT, `{}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			_, err := v.check(req, c.status, c.header, []byte(c.body))
			if c.valid && err != nil {
				t.Fatalf("a valid answer is refused: %v", err)
			}
			if !c.valid && err == nil {
				t.Fatal("a wrong answer passes")
			}
			if err != nil {
				msg, _, _ := strings.Cut(err.Error(), "\n")
				t.Logf("refused: %s", msg)
			}
		})
	}
}

// The request check bites too: a body the description does not allow is
// refused, one it allows passes.
func TestAPIValidatorChecksRequests(t *testing.T) {
	raw, err := httpapi.APIDescriptionForTest()
	if err != nil {
		t.Fatal(err)
	}
	v := newAPIValidator(t, raw)
	cases := []struct {
		name, method, path, body string
		valid                    bool
	}{
		{"a job", "POST", "/v1/jobs", `{"executor":"exec","config":{"command":"true"},"count":2,"inputs":["` + strings.Repeat("a", 64) + `"]}`, true},
		{"a job without its executor", "POST", "/v1/jobs", `{"config":{"command":"true"}}`, false},
		{"a job with a field the protocol lacks", "POST", "/v1/jobs", `{"executor":"exec","bogus":1}`, false},
		{"a count that is not a number", "POST", "/v1/jobs", `{"executor":"exec","count":"2"}`, false},
		{"an input that is no digest", "POST", "/v1/jobs", `{"executor":"exec","inputs":["../etc/passwd"]}`, false},
		{"a group member", "POST", "/v1/groups/g1/members", `{"kind":"worker","id":"w1"}`, true},
		{"a group member of an unknown kind", "DELETE", "/v1/groups/g1/members/team/x", ``, false},
		{"a cancel with no body", "POST", "/v1/jobs/j1/cancel", ``, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			err := v.checkRequest(req, []byte(c.body))
			if c.valid && err != nil {
				t.Fatalf("a valid request is refused: %v", err)
			}
			if !c.valid && err == nil {
				t.Fatal("a wrong request passes")
			}
		})
	}
}
