package client

import (
	"context"
	"net/http"
	"net/url"

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
