package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// SubmitJob submits a job.
func (c *Client) SubmitJob(ctx context.Context, spec api.JobSpec) (api.Job, error) {
	var out api.JobResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs", spec, &out)
	return out.Job, err
}

// Job reads one job.
func (c *Client) Job(ctx context.Context, id string) (api.Job, error) {
	var out api.JobResponse
	err := c.Do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &out)
	return out.Job, err
}

// Jobs lists jobs, newest first.
func (c *Client) Jobs(ctx context.Context, limit int) ([]api.Job, error) {
	var out api.JobList
	path := "/v1/jobs"
	if limit > 0 {
		path += fmt.Sprintf("?limit=%d", limit)
	}
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Jobs, err
}

// CancelJob cancels a job.
func (c *Client) CancelJob(ctx context.Context, id string) (api.Job, error) {
	var out api.JobResponse
	err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", struct{}{}, &out)
	return out.Job, err
}

// Logs calls fn for each log entry of a job; with follow it returns when
// the job has ended and every entry was delivered.
func (c *Client) Logs(ctx context.Context, id string, follow bool, fn func(api.LogEntry) error) error {
	path := "/v1/jobs/" + url.PathEscape(id) + "/logs"
	if follow {
		path += "?follow=1"
	}
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e api.LogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("client: decode log entry: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("client: reading logs: %w", err)
	}
	return ctx.Err()
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
