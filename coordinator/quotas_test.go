package coordinator_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator"
	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/coordinator/httpapi"
	"github.com/gpulayer/gpulayer/sdk/api"
)

func quotaJob(config string) []byte {
	return []byte(`{"executor":"exec","config":` + config + `}`)
}

// Finding 6 (quotas): one client could hold any number of jobs. With a
// quota of 2 jobs that have not ended, ten concurrent submissions create
// exactly two; the rest are 429 rate_limited with Retry-After, another
// client is not affected, and cancelling frees a slot.
func TestPendingJobQuota(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.Quotas = httpapi.Quotas{MaxPendingJobs: 2}
	}})
	ci := mintClient(t, h, "ci", "submit")
	const racers = 10
	answers := make([]rawResp, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			answers[i] = call(t, h.URL, http.MethodPost, "/v1/jobs", ci, quotaJob(`{"command":"true"}`), nil)
		})
	}
	wg.Wait()
	created := 0
	var first api.JobResponse
	for _, a := range answers {
		switch a.status {
		case http.StatusCreated:
			created++
			decodeOK(t, a, http.StatusCreated, &first)
		default:
			wantCode(t, "a submission over the quota", a, http.StatusTooManyRequests, api.CodeRateLimited)
			if a.header.Get("Retry-After") == "" {
				t.Fatalf("429 without Retry-After: %s", a.raw)
			}
		}
	}
	if created != 2 {
		t.Fatalf("%d of %d concurrent submissions created a job, quota 2", created, racers)
	}
	admin := h.Client(t, h.AdminToken)
	if jobs, err := admin.Jobs(t.Context(), 0); err != nil || len(jobs) != 2 {
		t.Fatalf("jobs after the race: %d %v", len(jobs), err)
	}
	other := mintClient(t, h, "other", "submit")
	decodeOK(t, call(t, h.URL, http.MethodPost, "/v1/jobs", other, quotaJob(`{"command":"true"}`), nil), http.StatusCreated, nil)
	if _, err := h.Client(t, ci).CancelJob(t.Context(), first.Job.ID); err != nil {
		t.Fatal(err)
	}
	decodeOK(t, call(t, h.URL, http.MethodPost, "/v1/jobs", ci, quotaJob(`{"command":"true"}`), nil), http.StatusCreated, nil)
}

// echoConfig is an exec config of about n bytes, in arguments each within
// the per-argument bound.
func echoConfig(n int) string {
	var args []string
	for n > 0 {
		k := min(n, 16<<10)
		args = append(args, `"`+strings.Repeat("a", k)+`"`)
		n -= k + 3
	}
	return `{"command":"echo","args":[` + strings.Join(args, ",") + `]}`
}

// Five 15 MiB jobs added 235 MiB to a coordinator. A job spec over the
// job-size quota is 400 invalid_argument and creates nothing, even when
// each field is within its own bound.
func TestJobSizeQuota(t *testing.T) {
	const quota = 64 << 10
	h := coordinatortest.Start(t, coordinatortest.Options{Tweak: func(c *coordinator.Config) {
		c.Quotas = httpapi.Quotas{MaxJobBytes: quota}
	}})
	cases := []struct {
		name   string
		config string
		status int
	}{
		{"small", `{"command":"true"}`, http.StatusCreated},
		{"just under", echoConfig(quota - 300), http.StatusCreated},
		{"over the quota", echoConfig(quota), http.StatusBadRequest},
		{"ten times over", echoConfig(10 * quota), http.StatusBadRequest},
	}
	admin := h.Client(t, h.AdminToken)
	for _, c := range cases {
		before, err := admin.Jobs(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		r := call(t, h.URL, http.MethodPost, "/v1/jobs", h.AdminToken, quotaJob(c.config), nil)
		after, _ := admin.Jobs(t.Context(), 0)
		if c.status != http.StatusCreated {
			wantCode(t, c.name, r, c.status, api.CodeInvalidArgument)
			if !strings.Contains(r.body.Error.Message, "bytes") || len(after) != len(before) {
				t.Fatalf("%s: %s; jobs %d → %d", c.name, r.raw, len(before), len(after))
			}
			continue
		}
		decodeOK(t, r, c.status, nil)
	}
}

// GET /v1/jobs returned 75 MiB in one answer. It answers pages: the
// default size without limit, at most the maximum, and a cursor that walks
// every job once, newest first.
func TestJobListPages(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	const total = api.DefaultJobsPage + 5
	for range total {
		if _, err := admin.SubmitJob(t.Context(), api.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	page, err := admin.JobsPage(t.Context(), 0, "")
	if err != nil || len(page.Jobs) != api.DefaultJobsPage || page.Next == "" {
		t.Fatalf("first page without limit: %d jobs, next %q, %v", len(page.Jobs), page.Next, err)
	}
	seen := map[string]bool{}
	after := ""
	var prev string
	for {
		p, err := admin.JobsPage(t.Context(), 7, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range p.Jobs {
			if seen[j.ID] {
				t.Fatalf("job %s listed twice", j.ID)
			}
			if prev != "" && j.CreatedAt > prev {
				t.Fatalf("job %s (%s) after a newer one (%s)", j.ID, j.CreatedAt, prev)
			}
			seen[j.ID], prev = true, j.CreatedAt
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(seen) != total {
		t.Fatalf("pages listed %d jobs, want %d", len(seen), total)
	}
	all, err := admin.Jobs(t.Context(), 0)
	if err != nil || len(all) != total {
		t.Fatalf("the client's Jobs(0) followed the pages to %d jobs (%v), want %d", len(all), err, total)
	}
	for _, bad := range []string{
		"?limit=0", "?limit=-1", fmt.Sprintf("?limit=%d", api.MaxJobsPage+1), "?limit=x",
		"?after=not-a-cursor", "?after=" + strings.Repeat("A", 100), "?after=ajE6eA",
	} {
		wantCode(t, bad, call(t, h.URL, http.MethodGet, "/v1/jobs"+bad, h.AdminToken, nil, nil), http.StatusBadRequest, api.CodeInvalidArgument)
	}
}
