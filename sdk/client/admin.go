package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The admin calls need a client token with the admin role.

func workerPath(id string) string { return "/v1/workers/" + url.PathEscape(id) }

func groupPath(id string) string { return "/v1/groups/" + url.PathEscape(id) }

// Worker reads one worker's registry record.
func (c *Client) Worker(ctx context.Context, id string) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(ctx, http.MethodGet, workerPath(id), nil, &out)
	return out.Worker, err
}

// ReissueWorker mints a new credential for a worker; the old one stops
// working at once. The answer holds the new token, shown only this once.
func (c *Client) ReissueWorker(ctx context.Context, id string) (api.ReissueResponse, error) {
	var out api.ReissueResponse
	err := c.Do(ctx, http.MethodPost, workerPath(id)+"/reissue", struct{}{}, &out)
	return out, err
}

// RevokeWorker revokes a worker: its credential dies and the tasks it held
// are requeued.
func (c *Client) RevokeWorker(ctx context.Context, id string) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(ctx, http.MethodPost, workerPath(id)+"/revoke", struct{}{}, &out)
	return out.Worker, err
}

// ForgetWorker forgets a revoked, offline or unapproved worker that holds
// no task (the audit log keeps it) and returns its record as it was.
func (c *Client) ForgetWorker(ctx context.Context, id string) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(ctx, http.MethodDelete, workerPath(id), nil, &out)
	return out.Worker, err
}

// GPUs lists the fleet's GPUs with what runs on each (GET /v1/gpus); a
// worker id narrows it to that worker's.
func (c *Client) GPUs(ctx context.Context, workerID string) ([]api.GPU, error) {
	path := "/v1/gpus"
	if workerID != "" {
		path += "?worker=" + url.QueryEscape(workerID)
	}
	var out api.GPUList
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out.GPUs, err
}

// CreateGroup creates a group with its first members.
func (c *Client) CreateGroup(ctx context.Context, req api.CreateGroupRequest) (api.Group, error) {
	var out api.GroupResponse
	err := c.Do(ctx, http.MethodPost, "/v1/groups", req, &out)
	return out.Group, err
}

// Groups lists every group.
func (c *Client) Groups(ctx context.Context) ([]api.Group, error) {
	var out api.GroupList
	err := c.Do(ctx, http.MethodGet, "/v1/groups", nil, &out)
	return out.Groups, err
}

// Group reads one group.
func (c *Client) Group(ctx context.Context, id string) (api.Group, error) {
	var out api.GroupResponse
	err := c.Do(ctx, http.MethodGet, groupPath(id), nil, &out)
	return out.Group, err
}

// AddGroupMember adds a worker or a group to a group; adding a present
// member changes nothing.
func (c *Client) AddGroupMember(ctx context.Context, groupID string, m api.GroupMember) (api.Group, error) {
	var out api.GroupResponse
	err := c.Do(ctx, http.MethodPost, groupPath(groupID)+"/members", m, &out)
	return out.Group, err
}

// RemoveGroupMember removes a member from a group; removing an absent
// member changes nothing.
func (c *Client) RemoveGroupMember(ctx context.Context, groupID string, m api.GroupMember) (api.Group, error) {
	var out api.GroupResponse
	path := groupPath(groupID) + "/members/" + url.PathEscape(m.Kind) + "/" + url.PathEscape(m.ID)
	err := c.Do(ctx, http.MethodDelete, path, nil, &out)
	return out.Group, err
}

// DeleteGroup deletes a group and answers its last record.
func (c *Client) DeleteGroup(ctx context.Context, id string) (api.Group, error) {
	var out api.GroupResponse
	err := c.Do(ctx, http.MethodDelete, groupPath(id), nil, &out)
	return out.Group, err
}
