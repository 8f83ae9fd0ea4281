package coordinator_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// An artifact is its uploaders' teams': another team's client reads it
// as missing (404, the message a missing digest gets) and cannot stage it
// as a job's input; an admin reads any; uploading the same bytes again
// (which proves having them) lets that team read it.
func TestArtifactsAreTheirTeams(t *testing.T) {
	h, alice, bob, body, d := visionArtifact(t)
	missing := digest([]byte("nobody's"))
	foreign := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil)
	absent := call(t, h.URL, "GET", "/v1/artifacts/"+missing, bob, nil, nil)
	wantCode(t, "bob reads vision's artifact", foreign, 404, api.CodeNotFound)
	if foreign.body.Error.Message != "no artifact "+d || absent.body.Error.Message != "no artifact "+missing {
		t.Errorf("another team's artifact answers %q, a missing one %q", foreign.body.Error.Message, absent.body.Error.Message)
	}
	for who, tok := range map[string]string{"alice": alice, "admin": h.AdminToken} {
		if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, tok, nil, nil); r.status != 200 || !bytes.Equal(r.raw, body) {
			t.Errorf("%s reads the artifact: %d", who, r.status)
		}
	}
	before := snapshot(t, h)
	spec := fmt.Sprintf(`{"executor":"exec","config":{"command":"true"},"inputs":[{"sha256":%q}]}`, d)
	wantCode(t, "bob stages vision's artifact", call(t, h.URL, "POST", "/v1/jobs", bob, []byte(spec), nil), 404, api.CodeNotFound)
	if !bytes.Equal(before, snapshot(t, h)) {
		t.Error("a refused submit changed the state")
	}
	if r := call(t, h.URL, "POST", "/v1/jobs", alice, []byte(spec), nil); r.status != 201 {
		t.Errorf("alice stages her own artifact: %d %s", r.status, r.raw)
	}
	if r := call(t, h.URL, "PUT", "/v1/artifacts/"+d, bob, body, nil); r.status != 200 {
		t.Fatalf("bob uploads the same bytes: %d %s", r.status, r.raw)
	}
	if r := call(t, h.URL, "GET", "/v1/artifacts/"+d, bob, nil, nil); r.status != 200 {
		t.Errorf("bob reads what he uploaded too: %d", r.status)
	}
}
