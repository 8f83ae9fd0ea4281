package client

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// SubmitJob submits a job.
//
// A spec without an idempotency key gets one of its own ("auto-" and 26
// random characters), so that a submit whose answer is lost, a leader
// failing over under it say, is resent and lands exactly once: the
// coordinator answers the resend with the job the first one made.
func (c *Client) SubmitJob(ctx context.Context, spec api.JobSpec) (api.Job, error) {
	var out api.JobResponse
	if spec.IdempotencyKey == "" {
		spec.IdempotencyKey = AutoIdempotencyPrefix + rand.Text()
	}
	ctx = withIdempotent(ctx) // the same key again returns the same job
	err := c.Do(ctx, http.MethodPost, "/v1/jobs", spec, &out)
	return out.Job, err
}

// AutoIdempotencyPrefix starts the idempotency keys SubmitJob makes.
const AutoIdempotencyPrefix = "auto-"

// Job reads one job.
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var out api.JobResponse
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &out)
	return out.Job, err
}

// JobEvents reads a job's events, oldest first (GET /v1/jobs/{id}/events).
func (c *Client) JobEvents(ctx context.Context, id string) (api.JobEvents, error) {
	var out api.JobEvents
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/events", nil, &out)
	return out, err
}

// JobsPage reads one page of jobs, newest first: at most limit (0: the
// coordinator's default page size), after the cursor of a previous page
// ("": from the newest). The answer's Next is the cursor of the page that
// follows, empty on the last one.
func (c *Client) JobsPage(ctx context.Context, limit int, after string) (api.JobList, error) {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	if after != "" {
		q.Set("after", after)
	}
	path := "/v1/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.JobList
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// Jobs lists jobs, newest first: at most limit, or every job with limit 0,
// following the pages of GET /v1/jobs.
func (c *Client) Jobs(ctx context.Context, limit int) ([]api.Job, error) {
	var all []api.Job
	after := ""
	for {
		size := api.MaxJobsPage
		if limit > 0 {
			size = min(size, limit-len(all))
		}
		page, err := c.JobsPage(ctx, size, after)
		if err != nil {
			return all, err
		}
		all = append(all, page.Jobs...)
		if page.Next == "" || (limit > 0 && len(all) >= limit) {
			return all, nil
		}
		after = page.Next
	}
}

// CancelJob cancels a job.
func (c *Client) CancelJob(ctx context.Context, id string) (api.Job, error) {
	var out api.JobResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", struct{}{}, &out)
	return out.Job, err
}

// Logs calls fn for each log entry of a job; with follow it returns when
// the job has ended and every entry was delivered. A coordinator ends a
// following stream after its maximum life (the trailer says so); Logs then
// reconnects and skips, task by task, the entries it already delivered (a
// task's entries only ever grow at the end, so the replay is the same up
// to there). A following stream cut without its trailer (the coordinator
// serving or relaying it failed, as in a leader failover) is resumed the
// same way, through whichever coordinator answers; after maxStreamCuts
// cuts in a row that delivered nothing, Logs returns the last one.
func (c *Client) Logs(ctx context.Context, id string, follow bool, fn func(api.LogEntry) error) error {
	seen := map[string]int{}
	cuts := 0
	for {
		end, delivered, err := c.logsOnce(ctx, id, follow, seen, fn)
		switch {
		case !follow || ctx.Err() != nil:
			return err
		case errors.Is(err, errStreamCut) || (err == nil && end == ""):
			if delivered > 0 {
				cuts = 0
			}
			if cuts++; cuts > maxStreamCuts {
				if err == nil {
					err = fmt.Errorf("client: reading logs: %w without its end trailer", errStreamCut)
				}
				return err
			}
		case err != nil || end != api.StreamEndMaxLife:
			return err
		}
	}
}

// maxStreamCuts bounds Logs' reconnections after cut streams that
// delivered nothing, in a row.
const maxStreamCuts = 5

// errStreamCut marks a log stream that ended before its end.
var errStreamCut = errors.New("log stream cut")

// logsOnce reads one stream, skipping per task the first seen[task]
// entries and counting what it delivers; it returns how the stream ended
// and how many entries it delivered.
func (c *Client) logsOnce(ctx context.Context, id string, follow bool, seen map[string]int, fn func(api.LogEntry) error) (string, int, error) {
	path := "/v1/jobs/" + url.PathEscape(id) + "/logs"
	if follow {
		path += "?follow=1"
	}
	// A stream: its answer is bounded by ctx and the stream's own limits.
	resp, err := c.send(withoutAnswerTimeout(ctx), http.MethodGet, path, nil)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	read := map[string]int{}
	delivered := 0
	for sc.Scan() {
		var e api.LogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return "", delivered, fmt.Errorf("client: decode log entry: %w", err)
		}
		read[e.TaskID]++
		if read[e.TaskID] <= seen[e.TaskID] {
			continue
		}
		seen[e.TaskID]++
		delivered++
		if err := fn(e); err != nil {
			return "", delivered, err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return "", delivered, fmt.Errorf("client: reading logs: %w: %w", errStreamCut, err)
	}
	return resp.Trailer.Get(api.HeaderStreamEnd), delivered, ctx.Err()
}

// Health reads the health of whichever coordinator answers.
func (c *Client) Health(ctx context.Context) (api.HealthResponse, error) {
	var out api.HealthResponse
	err := c.Do(ctx, http.MethodGet, "/v1/status/health", nil, &out)
	return out, err
}

// Workers lists registered workers (admin).
func (c *Client) Workers(ctx context.Context) ([]api.Worker, error) {
	var out struct {
		Workers []api.Worker `json:"workers"`
	}
	err := c.Do(ctx, http.MethodGet, "/v1/workers", nil, &out)
	return out.Workers, err
}
