package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// A submit in flight when the leader fails over lands exactly once. The
// leader takes the submit and commits the job, then goes away before its
// answer reaches the client (a proxy in front of it drops the answer and
// stops the leader): the client cannot know whether the job exists. It
// resends under the idempotency key SubmitJob gave the spec, another
// coordinator answers once a new leader is in office, and the answer is
// the job the first send made. Without the key the resend was refused
// (the outcome unknown), and a caller's retry made a second job.
func TestSubmitInFlightDuringFailoverLandsOnce(t *testing.T) {
	c := startCluster(t, nil)
	leader := c.WaitLeader(15 * time.Second)
	c.Converged(10 * time.Second)
	target, err := url.Parse(leader.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var once sync.Once
	sent := make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-sent:
			// The leader is gone: its address answers nothing.
			panic(http.ErrAbortHandler)
		default:
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/jobs" {
			forward.ServeHTTP(w, r)
			return
		}
		first := false
		once.Do(func() { first = true })
		if !first {
			forward.ServeHTTP(w, r)
			return
		}
		// The leader answers; the answer is lost with the leader.
		rec := httptest.NewRecorder()
		forward.ServeHTTP(rec, r)
		if rec.Code != http.StatusCreated {
			t.Errorf("the leader answered the first submit %d: %s", rec.Code, rec.Body)
		}
		c.Stop(leader)
		close(sent)
		panic(http.ErrAbortHandler)
	}))
	t.Cleanup(proxy.Close)

	var others []string
	for _, n := range c.Nodes {
		if n != leader {
			others = append(others, n.URL)
		}
	}
	cl, err := client.New(client.Config{Addrs: append([]string{proxy.URL}, others...), Token: c.AdminToken, MaxRetryWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	job, err := cl.SubmitJob(ctx, execSpec("echo once", 0))
	if err != nil {
		t.Fatalf("submit across the failover: %v", err)
	}
	<-sent
	if !strings.HasPrefix(job.IdempotencyKey, client.AutoIdempotencyPrefix) {
		t.Fatalf("job idempotency key %q, want one SubmitJob made", job.IdempotencyKey)
	}
	admin, err := client.New(client.Config{Addrs: others, Token: c.AdminToken, MaxRetryWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := admin.Jobs(context.WithoutCancel(ctx), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != job.ID {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.ID
		}
		t.Fatalf("jobs %v after the failover, want %s alone", ids, job.ID)
	}
	if jobs[0].State != api.TaskPending && jobs[0].State != api.TaskRunning && jobs[0].State != api.TaskSucceeded {
		t.Fatalf("job %s is %s", job.ID, jobs[0].State)
	}
}
