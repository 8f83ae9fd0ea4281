package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// SetMIGLayout asks for a GPU's MIG layout (profiles such as "3g.40gb";
// none for the GPU whole): the GPU takes no new task while its agent
// drains and repartitions it; the record's mig_layout says how it stands.
func (c *Client) SetMIGLayout(ctx context.Context, workerID, uuid string, layout []string) (api.Worker, error) {
	if layout == nil {
		layout = []string{}
	}
	var out api.WorkerResponse
	err := c.Do(withIdempotent(ctx), http.MethodPut, migPath(workerID, uuid), api.MIGLayoutRequest{Layout: layout}, &out)
	return out.Worker, err
}

// ClearMIGLayout drops a GPU's MIG layout request: the GPU is taken as it
// is (a failed repartition given up).
func (c *Client) ClearMIGLayout(ctx context.Context, workerID, uuid string) (api.Worker, error) {
	var out api.WorkerResponse
	err := c.Do(withIdempotent(ctx), http.MethodDelete, migPath(workerID, uuid), nil, &out)
	return out.Worker, err
}

func migPath(workerID, uuid string) string {
	return workerPath(workerID) + "/devices/" + url.PathEscape(uuid) + "/mig"
}
