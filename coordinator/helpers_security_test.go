package coordinator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// mintClient creates a client token with roles and returns it.
func mintClient(t *testing.T, h *coordinatortest.Harness, name string, roles ...string) string {
	t.Helper()
	out, err := h.Client(t, h.AdminToken).CreateToken(t.Context(), api.CreateTokenRequest{Kind: api.TokenKindClient, Name: name, Roles: roles})
	if err != nil || out.Token == "" {
		t.Fatalf("create client token %s: %+v %v", name, out, err)
	}
	return out.Token
}

// mintJoin creates a join token and returns the answer.
func mintJoin(t *testing.T, admin *client.Client, req api.CreateTokenRequest) api.CreateTokenResponse {
	t.Helper()
	req.Kind = api.TokenKindJoin
	if req.Name == "" {
		req.Name = "join-test"
	}
	out, err := admin.CreateToken(t.Context(), req)
	if err != nil || out.Token == "" {
		t.Fatalf("create join token: %+v %v", out, err)
	}
	return out
}

// mintInstance creates an instance token bound to instanceID.
func mintInstance(t *testing.T, h *coordinatortest.Harness, instanceID string) string {
	t.Helper()
	out, err := h.Client(t, h.AdminToken).CreateInstanceToken(t.Context(), api.CreateInstanceTokenRequest{InstanceID: instanceID})
	if err != nil || out.Token == "" {
		t.Fatalf("create instance token: %+v %v", out, err)
	}
	return out.Token
}

// jsonBody encodes v for call.
func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeOK checks a 2xx answer with the wanted status and decodes it.
func decodeOK(t *testing.T, r rawResp, status int, out any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("got %d %s, want %d", r.status, r.raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(r.raw, out); err != nil {
			t.Fatalf("decode %s: %v", r.raw, err)
		}
	}
}

// wantCode checks an error answer.
func wantCode(t *testing.T, what string, r rawResp, status int, code api.Code) {
	t.Helper()
	if r.status != status || r.body.Error == nil || r.body.Error.Code != code {
		t.Fatalf("%s: got %d %s, want %d %s", what, r.status, r.raw, status, code)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (a log sink).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// callHeaders sends an unauthenticated request with one header repeated,
// once per value (several X-Forwarded-For headers).
func callHeaders(t *testing.T, url, method, path string, body []byte, name string, values []string) rawResp {
	t.Helper()
	req, err := http.NewRequest(method, url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	for _, v := range values {
		req.Header.Add(name, v)
	}
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
