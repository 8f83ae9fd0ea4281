package client

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// CreateTeam creates a team (admin).
func (c *Client) CreateTeam(ctx context.Context, req api.CreateTeamRequest) (api.Team, error) {
	var out api.TeamResponse
	err := c.Do(ctx, http.MethodPost, "/v1/teams", req, &out)
	return out.Team, err
}

// Teams lists the teams the caller sees: every team for an admin, its own
// for another client.
func (c *Client) Teams(ctx context.Context) ([]api.Team, error) {
	var out api.TeamList
	err := c.Do(ctx, http.MethodGet, "/v1/teams", nil, &out)
	return out.Teams, err
}

// Team reads one team with its live figures.
func (c *Client) Team(ctx context.Context, name string) (api.Team, error) {
	var out api.TeamResponse
	err := c.Do(ctx, http.MethodGet, teamPath(name), nil, &out)
	return out.Team, err
}

// UpdateTeam changes the settings req names (admin).
func (c *Client) UpdateTeam(ctx context.Context, name string, req api.UpdateTeamRequest) (api.Team, error) {
	var out api.TeamResponse
	err := c.Do(ctx, http.MethodPatch, teamPath(name), req, &out)
	return out.Team, err
}

// DeleteTeam deletes a team with no unfinished job, revoking its client
// tokens (admin).
func (c *Client) DeleteTeam(ctx context.Context, name string) (api.Team, error) {
	var out api.TeamResponse
	err := c.Do(ctx, http.MethodDelete, teamPath(name), nil, &out)
	return out.Team, err
}

func teamPath(name string) string { return "/v1/teams/" + url.PathEscape(name) }

// UsageQuery asks GET /v1/usage: a range (zero: the server's default,
// the 30 days before now) and a grouping (empty: team).
type UsageQuery struct {
	From, To time.Time
	GroupBy  string
}

// Usage reads GPU time by team and one dimension over a range: a
// client's own team's, an admin's every team's.
func (c *Client) Usage(ctx context.Context, q UsageQuery) (api.UsageResponse, error) {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339Nano))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339Nano))
	}
	if q.GroupBy != "" {
		v.Set("group_by", q.GroupBy)
	}
	path := "/v1/usage"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out api.UsageResponse
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}
