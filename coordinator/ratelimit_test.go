package coordinator_test

// Abuse limits (seed 000's known gap: no rate limiting): per source
// address before anything else, per credential after authentication, and
// a tighter one on the routes that create workers. Loopback is exempt by
// default; these tests speak as other addresses through the X-Real-IP of
// a loopback proxy they trust explicitly (behindLoopbackProxy).

import (
	"strconv"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func limited(t *testing.T, what string, r rawResp) {
	t.Helper()
	wantCode(t, what, r, 429, api.CodeRateLimited)
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("%s: Retry-After %q", what, r.header.Get("Retry-After"))
	}
}

func TestRateLimits(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		behindLoopbackProxy(c)
		c.RateLimits = httpapi.RateLimits{SourceRate: 0.01, SourceBurst: 30, PrincipalRate: 0.01, PrincipalBurst: 3, RegisterRate: 0.01, RegisterBurst: 2}
	}})
	// Per source, on an unauthenticated route.
	for range 30 {
		decodeOK(t, call(t, h.URL, "GET", "/v1/status/health", "", nil, from("198.51.100.1")), 200, nil)
	}
	limited(t, "source over its burst", call(t, h.URL, "GET", "/v1/status/health", "", nil, from("198.51.100.1")))
	limited(t, "the limit holds for authenticated routes too", call(t, h.URL, "GET", "/v1/jobs", h.AdminToken, nil, from("198.51.100.1")))
	decodeOK(t, call(t, h.URL, "GET", "/v1/status/health", "", nil, from("198.51.100.2")), 200, nil)
	for range 50 {
		decodeOK(t, call(t, h.URL, "GET", "/v1/status/health", "", nil, nil), 200, nil) // loopback: exempt
	}

	// Per credential: the same token from several addresses.
	tok := mintClient(t, h, "busy", "read")
	for i := range 3 {
		decodeOK(t, call(t, h.URL, "GET", "/v1/jobs", tok, nil, from("198.51.100."+strconv.Itoa(10+i))), 200, nil)
	}
	limited(t, "credential over its burst", call(t, h.URL, "GET", "/v1/jobs", tok, nil, from("198.51.100.20")))
	decodeOK(t, call(t, h.URL, "GET", "/v1/jobs", mintClient(t, h, "calm", "read"), nil, from("198.51.100.21")), 200, nil)

	// Registration routes, by source, with or without a credential.
	for range 2 {
		wantCode(t, "enroll (refused, but counted)", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "none", "k", "x"), from("198.51.100.30")), 403, api.CodeEnrollmentRefused)
	}
	limited(t, "enroll over its burst", call(t, h.URL, "POST", "/v1/workers/enroll", "", enrollBody(t, "none", "k", "x"), from("198.51.100.30")))
	limited(t, "register shares it", call(t, h.URL, "POST", "/v1/workers/register", h.JoinToken, []byte(`{}`), from("198.51.100.30")))
}

// The Go client waits out 429 answers (Retry-After) instead of failing.
func TestClientWaitsOutRateLimits(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.RateLimits = httpapi.RateLimits{PrincipalRate: 2, PrincipalBurst: 1}
		c.RateLimitExemptCIDRs = []string{"none"}
	}})
	c, err := client.New(client.Config{Addrs: []string{h.URL}, Token: h.AdminToken, MaxRetryWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 3 {
		if _, err := c.Jobs(t.Context(), 1); err != nil {
			t.Fatalf("jobs under a rate limit: %v", err)
		}
	}
	if time.Since(start) < 900*time.Millisecond {
		t.Fatalf("three calls at 2/s with a burst of 1 took %v: the limit did not apply", time.Since(start))
	}
}
