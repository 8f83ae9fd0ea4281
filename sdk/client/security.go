package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The credential, enrollment and audit calls need a client token with the
// admin role, except Enroll (no token at all) and the artifact calls.

// CreateToken creates a client or join token. The answer holds the token,
// shown only this once.
func (c *Client) CreateToken(ctx context.Context, req api.CreateTokenRequest) (api.CreateTokenResponse, error) {
	var out api.CreateTokenResponse
	err := c.Do(ctx, http.MethodPost, "/v1/tokens", req, &out)
	return out, err
}

// CreateInstanceToken mints a single-use instance token bound to one
// instance id.
func (c *Client) CreateInstanceToken(ctx context.Context, req api.CreateInstanceTokenRequest) (api.CreateTokenResponse, error) {
	var out api.CreateTokenResponse
	err := c.Do(ctx, http.MethodPost, "/v1/instance-tokens", req, &out)
	return out, err
}

// Tokens lists client, join and instance tokens (never their secrets).
func (c *Client) Tokens(ctx context.Context) ([]api.TokenInfo, error) {
	var out api.TokenList
	err := c.Do(ctx, http.MethodGet, "/v1/tokens", nil, &out)
	return out.Tokens, err
}

// RevokeToken revokes a token by id.
func (c *Client) RevokeToken(ctx context.Context, id string) (api.TokenInfo, error) {
	var out api.TokenResponse
	err := c.Do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, &out)
	return out.Token, err
}

// ApproveWorker lets a pending worker heartbeat and take work.
func (c *Client) ApproveWorker(ctx context.Context, id string) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(ctx, http.MethodPost, workerPath(id)+"/approve", struct{}{}, &out)
	return out.Worker, err
}

// PutCluster creates an enrollment cluster or replaces its networks.
func (c *Client) PutCluster(ctx context.Context, req api.ClusterRequest) (api.Cluster, error) {
	var out api.ClusterResponse
	err := c.Do(ctx, http.MethodPost, "/v1/clusters", req, &out)
	return out.Cluster, err
}

// Clusters lists the enrollment clusters.
func (c *Client) Clusters(ctx context.Context) ([]api.Cluster, error) {
	var out api.ClusterList
	err := c.Do(ctx, http.MethodGet, "/v1/clusters", nil, &out)
	return out.Clusters, err
}

// CreateEnrollment adds a pending allowlist row.
func (c *Client) CreateEnrollment(ctx context.Context, req api.EnrollmentRequest) (api.Enrollment, error) {
	var out api.EnrollmentResponse
	err := c.Do(ctx, http.MethodPost, "/v1/enrollments", req, &out)
	return out.Enrollment, err
}

// Enrollments lists the allowlist rows.
func (c *Client) Enrollments(ctx context.Context) ([]api.Enrollment, error) {
	var out api.EnrollmentList
	err := c.Do(ctx, http.MethodGet, "/v1/enrollments", nil, &out)
	return out.Enrollments, err
}

// RevokeEnrollment revokes an allowlist row and the worker enrolled
// through it.
func (c *Client) RevokeEnrollment(ctx context.Context, key string) (api.Enrollment, error) {
	var out api.EnrollmentResponse
	err := c.Do(ctx, http.MethodPost, "/v1/enrollments/"+url.PathEscape(key)+"/revoke", struct{}{}, &out)
	return out.Enrollment, err
}

// Enroll redeems an allowlist row. It sends no bearer token, whatever the
// client holds.
func (c *Client) Enroll(ctx context.Context, req api.EnrollRequest) (api.RegisterResponse, error) {
	var out api.RegisterResponse
	err := c.doAs(ctx, "", http.MethodPost, "/v1/workers/enroll", req, &out)
	return out, err
}

// AuditQuery selects audit events; zero fields select everything.
type AuditQuery struct {
	Since, Until time.Time
	Kinds        []string
	After        uint64
	Limit        int
}

func (q AuditQuery) path() string {
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	if len(q.Kinds) > 0 {
		v.Set("kind", strings.Join(q.Kinds, ","))
	}
	if q.After > 0 {
		v.Set("after", strconv.FormatUint(q.After, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if len(v) == 0 {
		return "/v1/audit"
	}
	return "/v1/audit?" + v.Encode()
}

// Audit reads one page of the audit log, oldest first.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (api.AuditList, error) {
	var out api.AuditList
	err := c.Do(ctx, http.MethodGet, q.path(), nil, &out)
	return out, err
}
