package coordinator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// With two of three coordinators stopped, the one left has no quorum: it
// answers a request that needs the leader at once with 503 no_leader and
// Retry-After (it does not hold it until a long timeout), and a client
// that knows all three gets, within a few seconds, one error naming every
// address with what it said (issue 27: the CLI waited 15 s, then named
// only the first address).
func TestNoQuorumAnswersAtOnceAndTheClientNamesEveryCoordinator(t *testing.T) {
	// The survivor is a follower that loses its leader, or the leader
	// that loses its quorum (and steps down).
	for _, survivorLeads := range []bool{false, true} {
		name := "a follower survives"
		if survivorLeads {
			name = "the leader survives"
		}
		t.Run(name, func(t *testing.T) { noQuorum(t, survivorLeads) })
	}
}

func noQuorum(t *testing.T, survivorLeads bool) {
	c := coordinatortest.StartCluster(t, 3, coordinatortest.Options{})
	leader := c.WaitLeader(15 * time.Second)
	survivor := leader
	if !survivorLeads {
		for _, n := range c.Nodes {
			if n != leader {
				survivor = n
				break
			}
		}
	}
	for _, n := range c.Nodes {
		if n != survivor {
			c.Stop(n)
		}
	}

	// The survivor answers reads and writes that need the leader with the
	// contract's no_leader, within a generous deadline (each request is
	// bounded by it, so a hang fails the test rather than passing it).
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ask := func(method, path string, body []byte) (int, api.Error, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, survivor.URL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(api.ProtocolHeader, api.ProtocolVersion)
		req.Header.Set("Authorization", "Bearer "+c.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s on the survivor: %v (it must answer, not hang)", method, path, err)
		}
		defer resp.Body.Close()
		var eb api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&eb)
		var e api.Error
		if eb.Error != nil {
			e = *eb.Error
		}
		return resp.StatusCode, e, resp.Header
	}
	// Until it notices (a heartbeat timeout) the survivor may still try
	// the stopped leader; that is answered no_leader too. Once it answers
	// no_leader, a write that needs the leader is answered the same way.
	noLeader := func(status int, e api.Error, h http.Header) bool {
		return status == http.StatusServiceUnavailable && e.Code == api.CodeNoLeader && h.Get("Retry-After") != ""
	}
	coordinatortest.WaitFor(t, 15*time.Second, "the survivor to answer no_leader", func() bool {
		return noLeader(ask(http.MethodGet, "/v1/jobs", nil))
	})
	if status, e, h := ask(http.MethodPost, "/v1/jobs", []byte(`{"executor":"exec","config":{"command":"true"}}`)); !noLeader(status, e, h) {
		t.Fatalf("POST /v1/jobs on the survivor: %d %+v (Retry-After %q), want 503 no_leader with Retry-After", status, e, h.Get("Retry-After"))
	}

	// A person's client (the CLI's settings) gets one error naming all
	// three, for a read and for a write that is not idempotent (refused
	// dials and no_leader answers are safe to resend elsewhere).
	cl, err := client.New(client.Config{Addrs: c.URLs(), Token: c.AdminToken, MaxRetryWait: 15 * time.Second, FailFast: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"job list": func() error { _, err := cl.Jobs(ctx, 10); return err },
		"job submit": func() error {
			_, err := cl.SubmitJob(ctx, api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if ctx.Err() != nil {
			t.Fatalf("%s returned only once its context ended: %v", name, err)
		}
		var nq *client.NoQuorumError
		if !errors.As(err, &nq) || !errors.Is(err, client.ErrNoQuorum) || !client.IsCode(err, api.CodeNoLeader) {
			t.Fatalf("%s: %v, want a NoQuorumError with the survivor's no_leader", name, err)
		}
		t.Logf("%s: %v", name, err)
		if len(nq.Tries) != 3 {
			t.Errorf("%s: tried %+v, want all three coordinators", name, nq.Tries)
		}
		for i, tr := range nq.Tries {
			want := "refused the connection"
			if c.Nodes[i] == survivor {
				want = "answered 503 no_leader"
			}
			if tr.Addr != c.Nodes[i].URL || !strings.Contains(tr.Said(), want) {
				t.Errorf("%s: try %d is %s: %q, want %s: %q", name, i, tr.Addr, tr.Said(), c.Nodes[i].URL, want)
			}
		}
	}
}
