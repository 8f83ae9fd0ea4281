package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Queue reads the order the scheduler serves (GET /v1/queue): team
// empty reads a client's own team, or every team for an admin; limit
// bounds the tasks listed per team (0: the server's default).
func (c *Client) Queue(ctx context.Context, team string, limit int) (api.QueueResponse, error) {
	v := url.Values{}
	if team != "" {
		v.Set("team", team)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	path := "/v1/queue"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var out api.QueueResponse
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}
