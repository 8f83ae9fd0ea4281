package coordinator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/auth"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The review's Medium: nothing bounded the artifact bytes one credential
// could store, so a submit token (or a task's sparse outputs) could fill
// the coordinators' disks. Each credential now keeps at most
// MaxArtifactBytes of artifacts it uploaded first: past it an upload is
// 413 and nothing is recorded; a digest already recorded costs nothing,
// and another credential has its own room.
func TestArtifactByteQuotaPerCredential(t *testing.T) {
	const quota = 1000
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.Quotas = httpapi.Quotas{MaxArtifactBytes: quota}
	}})
	alice := mintClient(t, h, "alice", auth.RoleSubmit)
	bob := mintClient(t, h, "bob", auth.RoleSubmit)
	first := bytes.Repeat([]byte("a"), 600)
	second := bytes.Repeat([]byte("b"), 600)

	wantStatus := func(what string, r rawResp, status int) {
		t.Helper()
		if r.status != status {
			t.Fatalf("%s: HTTP %d %s, want %d", what, r.status, r.raw, status)
		}
	}
	wantStatus("alice's first upload", call(t, h.URL, "PUT", "/v1/artifacts/"+digest(first), alice, first, nil), 201)
	before := snapshot(t, h)
	wantCode(t, "alice's second upload, past her quota", call(t, h.URL, "PUT", "/v1/artifacts/"+digest(second), alice, second, nil), 413, api.CodeBodyTooLarge)
	if _, ok := h.Server.Store().Artifact(digest(second)); ok {
		t.Fatal("an upload over the quota was recorded")
	}
	if after := snapshot(t, h); !bytes.Equal(before, after) {
		t.Fatal("an upload over the quota changed the state")
	}
	// Without a length the check is made once the bytes are in.
	wantCode(t, "alice's second upload, no length given", callChunked(t, h.URL, "/v1/artifacts/"+digest(second), alice, second), 413, api.CodeBodyTooLarge)
	if _, ok := h.Server.Store().Artifact(digest(second)); ok {
		t.Fatal("a chunked upload over the quota was recorded")
	}
	wantStatus("the same digest again", call(t, h.URL, "PUT", "/v1/artifacts/"+digest(first), alice, first, nil), 200)
	wantStatus("bob's upload", call(t, h.URL, "PUT", "/v1/artifacts/"+digest(second), bob, second, nil), 201)
	if got := h.Server.Store().ArtifactBytesBy("alice"); got != 600 {
		t.Fatalf("alice's usage %d, want 600", got)
	}
}

// callChunked PUTs body without a Content-Length (chunked encoding).
func callChunked(t *testing.T, base, path, token string, body []byte) rawResp {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, base+path, io.MultiReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := rawResp{status: resp.StatusCode, raw: raw, header: resp.Header}
	_ = json.Unmarshal(raw, &out.body)
	return out
}
