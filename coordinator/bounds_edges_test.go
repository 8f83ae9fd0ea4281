package coordinator_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// rawRequest writes req as bytes on a fresh TCP connection to the
// harness and reads one answer.
func rawRequest(t *testing.T, h *coordinatortest.Harness, req string) (*http.Response, []byte) {
	t.Helper()
	u, err := url.Parse(h.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The server may answer before it has read everything; a write error
	// then is expected, the answer is what counts.
	go func() { _, _ = io.WriteString(conn, req) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestOverlongRequestHeadersGetTheJSONError repeats finding 6: a request
// line or a header over the protocol's limit is answered 431 with the
// protocol's JSON error body (code invalid_argument), over a real socket.
func TestOverlongRequestHeadersGetTheJSONError(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	long := strings.Repeat("a", api.MaxHeaderBytes+1)
	cases := []struct {
		name, req string
	}{
		{"request line", "GET /v1/jobs/" + long + " HTTP/1.1\r\nHost: x\r\nX-GpuLayer-Protocol: 1\r\n\r\n"},
		{"query string", "GET /v1/jobs?after=" + long + " HTTP/1.1\r\nHost: x\r\nX-GpuLayer-Protocol: 1\r\n\r\n"},
		{"one header", "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-GpuLayer-Protocol: 1\r\nX-Pad: " + long + "\r\n\r\n"},
		{"many headers", "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-GpuLayer-Protocol: 1\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 70) + "\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := rawRequest(t, h, c.req)
			var eb api.ErrorBody
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || json.Unmarshal(body, &eb) != nil || eb.Error == nil || eb.Error.Code != api.CodeInvalidArgument {
				t.Fatalf("got %d %q, want 431 with an invalid_argument JSON body", resp.StatusCode, body)
			}
			if resp.Header.Get("Content-Type") != "application/json" || eb.Error.RequestID == "" || !strings.Contains(eb.Error.Message, "at most 65536") {
				t.Fatalf("error body is not the protocol's: %s %q", resp.Header.Get("Content-Type"), body)
			}
		})
	}
	// Just under the limit, the request goes on to be authenticated.
	under := "GET /v1/jobs/" + strings.Repeat("a", api.MaxHeaderBytes-200) + " HTTP/1.1\r\nHost: x\r\nX-GpuLayer-Protocol: 1\r\n\r\n"
	if resp, body := rawRequest(t, h, under); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a request under the limit: got %d %q, want 401", resp.StatusCode, body)
	}
	// Past what the server reads at all, net/http answers 431 itself.
	huge := "GET /v1/jobs HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", httpapi.ServerMaxHeaderBytes+8192) + "\r\n\r\n"
	if resp, body := rawRequest(t, h, huge); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a request past the server's read limit: got %d %q, want 431", resp.StatusCode, body)
	}
}

// TestCredentialsInPathsAreRedacted repeats finding 6: a token put in a
// URL path does not reach the debug log, nor the error answer.
func TestCredentialsInPathsAreRedacted(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := coordinatortest.Start(t, coordinatortest.Options{Logger: logger})
	secretOf := func(tok string) string { return tok[strings.LastIndex(tok, "_")+1:] }
	cut := h.JoinToken[:len(h.JoinToken)-10] // a token cut short is still redacted
	paths := []string{
		"/v1/jobs/" + h.AdminToken,
		"/v1/jobs/" + h.AdminToken + "/logs",
		"/v1/nowhere/" + h.JoinToken,
		"/v1/jobs/" + cut,
	}
	for _, p := range paths {
		r := call(t, h.URL, "GET", p, h.AdminToken, nil, nil)
		if r.status < 400 || r.body.Error == nil {
			t.Fatalf("GET %s: got %d %s, want an error", p, r.status, r.raw)
		}
		for _, s := range []string{secretOf(h.AdminToken), secretOf(h.JoinToken), secretOf(cut)} {
			if bytes.Contains(r.raw, []byte(s)) {
				t.Errorf("GET %s: the answer echoes a secret: %s", p, r.raw)
			}
		}
	}
	out := logs.Bytes()
	if !bytes.Contains(out, []byte("path=/v1/jobs/glc_[redacted]")) || !bytes.Contains(out, []byte("path=/v1/nowhere/glj_[redacted]")) {
		t.Fatalf("the request log does not show the redacted paths:\n%s", out)
	}
	for _, s := range []string{secretOf(h.AdminToken), secretOf(h.JoinToken), secretOf(cut)} {
		if bytes.Contains(out, []byte(s)) {
			t.Fatalf("the debug log holds a secret from a path")
		}
	}
}

// acquireCtx posts an acquire long poll bounded by ctx and returns its
// status (0 when ctx ended first).
func acquireCtx(ctx context.Context, t *testing.T, h *coordinatortest.Harness, token string, wait int) (int, http.Header) {
	req, err := http.NewRequestWithContext(ctx, "POST", h.URL+"/v1/workers/self/acquire", strings.NewReader(`{"wait_seconds":`+strconv.Itoa(wait)+`}`))
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

// TestLongPollsPerCredentialAreBounded repeats finding 6 (200 long polls
// from one credential were all accepted): past api.MaxLongPollsPerCredential
// open at once, one more is refused 429 with Retry-After, other
// credentials are not affected, and a slot comes back when a poll ends.
func TestLongPollsPerCredentialAreBounded(t *testing.T) {
	f := newBoundsFixture(t, coordinatortest.Options{})
	h := f.h
	holdCtx, release := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range api.MaxLongPollsPerCredential {
		wg.Go(func() { acquireCtx(holdCtx, t, h, f.other, api.MaxWaitSeconds) })
	}
	coordinatortest.WaitFor(t, 10*time.Second, "the long polls to be held", func() bool { return openLongPolls(t, h) == api.MaxLongPollsPerCredential })
	status, header := acquireCtx(t.Context(), t, h, f.other, api.MaxWaitSeconds)
	if status != http.StatusTooManyRequests {
		t.Fatalf("one long poll too many got %d, want 429", status)
	}
	if header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After")
	}
	for range 20 {
		if status, _ := acquireCtx(t.Context(), t, h, f.other, api.MaxWaitSeconds); status != http.StatusTooManyRequests {
			t.Fatalf("an extra long poll got %d, want 429", status)
		}
	}
	// Another credential has its own slots.
	if status, _ := acquireCtx(t.Context(), t, h, f.worker, 1); status != http.StatusOK {
		t.Fatalf("another worker's long poll got %d", status)
	}
	release()
	wg.Wait()
	coordinatortest.WaitFor(t, 10*time.Second, "slots to come back once the polls end", func() bool { return openLongPolls(t, h) == 0 })
	if status, _ := acquireCtx(t.Context(), t, h, f.other, 1); status != http.StatusOK {
		t.Fatalf("a long poll after the others ended got %d", status)
	}
}

// openLongPolls reads gpulayer_long_polls_open from /metrics.
func openLongPolls(t *testing.T, h *coordinatortest.Harness) int {
	t.Helper()
	r := call(t, h.URL, "GET", "/metrics", "", nil, nil)
	for _, line := range strings.Split(string(r.raw), "\n") {
		if v, ok := strings.CutPrefix(line, "gpulayer_long_polls_open "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no gpulayer_long_polls_open in /metrics")
	return 0
}

// TestFollowStreamsPerCredentialAreBounded: log follow streams share the
// same bound.
func TestFollowStreamsPerCredentialAreBounded(t *testing.T) {
	f := newBoundsFixture(t, coordinatortest.Options{})
	h := f.h
	reader := mintClient(t, h, "follower", "read")
	job := strings.TrimSuffix(f.heldTask, "-0")
	admin := h.Client(t, h.AdminToken)
	ended, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CancelJob(t.Context(), ended.ID); err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context, job string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", h.URL+"/v1/jobs/"+job+"/logs?follow=1", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		req.Header.Set("Authorization", "Bearer "+reader)
		return http.DefaultClient.Do(req)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var held []*http.Response
	for range api.MaxLongPollsPerCredential {
		resp, err := open(ctx, job)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("follow stream: %v %v", resp, err)
		}
		held = append(held, resp)
	}
	resp, err := open(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !bytes.Contains(body, []byte(api.CodeRateLimited)) {
		t.Fatalf("one follow stream too many: got %d %s", resp.StatusCode, body)
	}
	// Following a job that has ended waits for nothing: it takes no slot.
	resp, err = open(t.Context(), ended.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Trailer.Get(api.HeaderStreamEnd) != api.StreamEndJobEnded {
		t.Fatalf("following an ended job with every slot held: %d, trailer %q", resp.StatusCode, resp.Trailer.Get(api.HeaderStreamEnd))
	}
	for _, r := range held {
		r.Body.Close()
	}
	cancel()
	coordinatortest.WaitFor(t, 10*time.Second, "a follow slot to come back", func() bool {
		c, stop := context.WithTimeout(t.Context(), 2*time.Second)
		defer stop()
		r, err := open(c, job)
		if err != nil {
			return false
		}
		defer r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
}
