package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Peers lists the Raft servers.
func (c *Client) Peers(ctx context.Context) ([]api.Peer, error) {
	var out api.PeersResponse
	err := c.Do(ctx, http.MethodGet, "/v1/status/peers", nil, &out)
	return out.Peers, err
}

// AddPeer adds a server to the Raft configuration (admin).
func (c *Client) AddPeer(ctx context.Context, nodeID, raftAddr string) ([]api.Peer, error) {
	var out api.PeersResponse
	err := c.Do(ctx, http.MethodPost, "/v1/operator/raft/peers", api.RaftPeerRequest{NodeID: nodeID, RaftAddr: raftAddr}, &out)
	return out.Peers, err
}

// CollectGarbage removes the finished jobs due under the coordinators'
// retention now (admin); olderThan, when not nil, replaces the retention
// threshold for this collection. It returns how many jobs were removed.
func (c *Client) CollectGarbage(ctx context.Context, olderThan *time.Duration) (int, error) {
	var req api.GCRequest
	if olderThan != nil {
		secs := int64(olderThan.Seconds())
		req.OlderThanSeconds = &secs
	}
	var out api.GCResponse
	err := c.Do(ctx, http.MethodPost, "/v1/operator/gc", req, &out)
	return out.Removed, err
}

// RemovePeer removes a server from the Raft configuration (admin).
func (c *Client) RemovePeer(ctx context.Context, nodeID string) ([]api.Peer, error) {
	var out api.PeersResponse
	err := c.Do(ctx, http.MethodDelete, "/v1/operator/raft/peers/"+url.PathEscape(nodeID), nil, &out)
	return out.Peers, err
}

// SaveSnapshot writes a snapshot of the whole replicated state to w (admin).
func (c *Client) SaveSnapshot(ctx context.Context, w io.Writer) (int64, error) {
	resp, err := c.sendRaw(withoutAnswerTimeout(ctx), http.MethodGet, "/v1/operator/snapshot", nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, fmt.Errorf("client: reading snapshot: %w", err)
	}
	return n, nil
}

// RestoreSnapshot replaces the whole replicated state with a snapshot
// (admin). Every server installs it. A regular file or a *bytes.Reader is
// streamed from where it stands, and read again from there should the
// upload be retried (its own position does not move); any other reader
// is read into memory first.
func (c *Client) RestoreSnapshot(ctx context.Context, r io.Reader) error {
	open, err := rereadable(r)
	if err != nil {
		return fmt.Errorf("client: read snapshot: %w", err)
	}
	resp, err := c.sendBody(withoutAnswerTimeout(ctx), "", http.MethodPut, "/v1/operator/snapshot", open, "application/octet-stream")
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// rereadable returns what sendBody needs to send the rest of r, as many
// times as it tries.
func rereadable(r io.Reader) (func() (io.ReadCloser, int64, error), error) {
	section := func(ra io.ReaderAt, off, n int64) func() (io.ReadCloser, int64, error) {
		return func() (io.ReadCloser, int64, error) {
			return io.NopCloser(io.NewSectionReader(ra, off, n)), n, nil
		}
	}
	switch v := r.(type) {
	case *bytes.Reader:
		return section(v, v.Size()-int64(v.Len()), int64(v.Len())), nil
	case *os.File:
		// A size of 0 may be a file that does not say its size (procfs):
		// read those whole, as any reader.
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			off, err := v.Seek(0, io.SeekCurrent)
			if err != nil {
				return nil, err
			}
			return section(v, off, max(st.Size()-off, 0)), nil
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return section(bytes.NewReader(b), 0, int64(len(b))), nil
}
