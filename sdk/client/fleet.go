package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Fleet control. Each call is safe to resend: drain, stop and resume set
// a status, so twice is once (a drain sent again counts its deadline
// from the second arrival).

// drainBody is a drain's body: deadline nil means the coordinator's
// default (api.DefaultDrainDeadlineSeconds), 0 stops the tasks now.
func drainBody(deadlineSeconds *int) api.DrainRequest {
	return api.DrainRequest{DeadlineSeconds: deadlineSeconds}
}

// DrainWorker makes a worker take no new task; its running tasks are
// stopped and requeued, without using up an attempt, once the deadline
// passes.
func (c *Client) DrainWorker(ctx context.Context, id string, deadlineSeconds *int) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(id)+"/drain", drainBody(deadlineSeconds))
}

// StopWorker stops a worker's tasks now (they are requeued without using
// up an attempt); its agent exits once it holds none.
func (c *Client) StopWorker(ctx context.Context, id string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(id)+"/stop", struct{}{})
}

// ResumeWorker makes a draining or stopping worker ready again.
func (c *Client) ResumeWorker(ctx context.Context, id string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(id)+"/resume", struct{}{})
}

// DrainSelf drains the calling worker (an agent at SIGTERM).
func (c *Client) DrainSelf(ctx context.Context, deadlineSeconds *int) (api.Worker, error) {
	return c.workerAction(ctx, "/v1/workers/self/drain", drainBody(deadlineSeconds))
}

// ResumeSelf lifts a drain the calling worker asked for itself; one an
// admin made answers 409 conflict.
func (c *Client) ResumeSelf(ctx context.Context) (api.Worker, error) {
	return c.workerAction(ctx, "/v1/workers/self/resume", struct{}{})
}

// Deregister drains the calling worker and then forgets it: once it holds
// no task its credential answers 401.
func (c *Client) Deregister(ctx context.Context, deadlineSeconds *int) (api.Worker, error) {
	return c.workerAction(ctx, "/v1/workers/self/deregister", drainBody(deadlineSeconds))
}

func (c *Client) workerAction(ctx context.Context, path string, body any) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(withIdempotent(ctx), http.MethodPost, path, body, &out)
	return out.Worker, err
}

// ClearGPU asks a worker's agent to take a GPU out of fault or quarantine
// (it returns to service after the agent's hold-down window).
func (c *Client) ClearGPU(ctx context.Context, workerID, uuid string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(workerID)+"/gpus/"+url.PathEscape(uuid)+"/clear", struct{}{})
}

// ApproveGPUs makes a worker's current GPU inventory the one its GPUs are
// offered as: GPUs new since the last approval, or whose memory changed,
// are given work from now on.
func (c *Client) ApproveGPUs(ctx context.Context, workerID string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(workerID)+"/gpus/approve", nil)
}

// CordonGPU cordons one of a worker's GPUs, with an optional reason: it is
// given no new task, and what runs on it goes on.
func (c *Client) CordonGPU(ctx context.Context, workerID, uuid, reason string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(workerID)+"/devices/"+url.PathEscape(uuid)+"/cordon", api.CordonRequest{Reason: reason})
}

// DrainGPU drains one of a worker's GPUs, with an optional reason: it is
// cordoned, and the tasks on it are stopped and requeued without using
// an attempt.
func (c *Client) DrainGPU(ctx context.Context, workerID, uuid, reason string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(workerID)+"/devices/"+url.PathEscape(uuid)+"/drain", api.CordonRequest{Reason: reason})
}

// UncordonGPU lifts a GPU's cordon: it is offered again.
func (c *Client) UncordonGPU(ctx context.Context, workerID, uuid string) (api.Worker, error) {
	return c.workerAction(ctx, workerPath(workerID)+"/devices/"+url.PathEscape(uuid)+"/uncordon", nil)
}
