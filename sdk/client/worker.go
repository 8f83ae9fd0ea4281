package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Register registers a worker with a join or instance token.
func (c *Client) Register(ctx context.Context, req api.RegisterRequest) (api.RegisterResponse, error) {
	var out api.RegisterResponse
	err := c.Do(ctx, http.MethodPost, "/v1/workers/register", req, &out)
	return out, err
}

// Self probes the worker credential.
func (c *Client) Self(ctx context.Context) (api.Worker, error) {
	var out api.Worker
	err := c.Do(ctx, http.MethodGet, "/v1/workers/self", nil, &out)
	return out, err
}

// Heartbeat sends a heartbeat.
func (c *Client) Heartbeat(ctx context.Context, req api.HeartbeatRequest) (api.HeartbeatResponse, error) {
	var out api.HeartbeatResponse
	// Sending a heartbeat twice renews and reports the same things: safe
	// to resend; the answer is the state when the last one arrived.
	err := c.Do(withIdempotent(ctx), http.MethodPost, "/v1/workers/self/heartbeat", req, &out)
	return out, err
}

// Acquire asks for a task, waiting up to req.WaitSeconds.
//
// The call is idempotent: it carries a request id (a fresh one when
// req.RequestID is empty), so it is retried under that id on any
// transport error, also one after the request may have reached a
// coordinator, and a retry whose first answer was lost gets that answer
// again, from the same leader or the next.
func (c *Client) Acquire(ctx context.Context, req api.AcquireRequest) (api.AcquireResponse, error) {
	if req.RequestID == "" {
		req.RequestID = newRequestID()
	}
	var out api.AcquireResponse
	// A long poll: its answer may take the wait it asks for.
	ctx = withAnswerWait(ctx, time.Duration(min(req.WaitSeconds, api.MaxWaitSeconds))*time.Second)
	err := c.Do(withIdempotent(ctx), http.MethodPost, "/v1/workers/self/acquire", req, &out)
	return out, err
}

func taskPath(id, verb string) string { return "/v1/tasks/" + url.PathEscape(id) + "/" + verb }

// Start marks an attempt running.
func (c *Client) Start(ctx context.Context, taskID, attemptID string) error {
	// Starting an attempt that runs already changes nothing: safe to
	// resend. A resend answers for the state it finds: stale_attempt if
	// the attempt lapsed meanwhile, whether or not the first one landed.
	return c.StartWith(ctx, taskID, api.StartRequest{AttemptID: attemptID})
}

// StartWith is Start with the whole request: its preflight report too.
func (c *Client) StartWith(ctx context.Context, taskID string, req api.StartRequest) error {
	return c.Do(withIdempotent(ctx), http.MethodPost, taskPath(taskID, "start"), req, nil)
}

// Rendezvous tells the coordinator where a gang member's attempt is
// reached and waits (a long poll, at most req.WaitSeconds or
// api.MaxRendezvousWaitSeconds) for the rest of its gang: Ready false
// means call again. Joining again with the same body changes nothing, so
// it is resent when its answer is lost.
func (c *Client) Rendezvous(ctx context.Context, taskID string, req api.RendezvousRequest) (api.RendezvousResponse, error) {
	var out api.RendezvousResponse
	wait := req.WaitSeconds
	if wait <= 0 || wait > api.MaxRendezvousWaitSeconds {
		wait = api.MaxRendezvousWaitSeconds
	}
	ctx = withAnswerWait(ctx, time.Duration(wait)*time.Second) // a long poll
	err := c.Do(withIdempotent(ctx), http.MethodPost, taskPath(taskID, "rendezvous"), req, &out)
	return out, err
}

// AppendLogs ships one chunk of output.
func (c *Client) AppendLogs(ctx context.Context, taskID string, req api.LogsRequest) error {
	// A sequence number seen before is ignored: safe to resend.
	return c.Do(withIdempotent(ctx), http.MethodPost, taskPath(taskID, "logs"), req, nil)
}

// Finish reports an attempt's exit code.
func (c *Client) Finish(ctx context.Context, taskID string, req api.FinishRequest) (api.Task, error) {
	var out api.TaskResponse
	if req.SubmissionID != "" {
		ctx = withIdempotent(ctx) // the same submission again gets the first answer
	}
	err := c.Do(ctx, http.MethodPost, taskPath(taskID, "finish"), req, &out)
	return out.Task, err
}

// Fail reports that an attempt could not run.
func (c *Client) Fail(ctx context.Context, taskID string, req api.FailRequest) (api.Task, error) {
	var out api.TaskResponse
	err := c.Do(ctx, http.MethodPost, taskPath(taskID, "fail"), req, &out)
	return out.Task, err
}
