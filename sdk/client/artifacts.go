package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ErrArtifactMismatch is wrapped by GetArtifact's error when the bytes it
// read do not hash to the digest asked for (a coordinator's copy damaged
// or tampered with): whatever was written must be thrown away.
var ErrArtifactMismatch = errors.New("artifact bytes do not hash to their digest")

type expectContinueKey struct{}

// withExpectContinue marks ctx's upload to ask for 100 Continue first: a
// coordinator that holds the artifact already answers without the bytes.
func withExpectContinue(ctx context.Context) context.Context {
	return context.WithValue(ctx, expectContinueKey{}, true)
}

func expectsContinue(ctx context.Context) bool {
	v, _ := ctx.Value(expectContinueKey{}).(bool)
	return v
}

// PutArtifact uploads bytes under their SHA-256 digest (submit role, or a
// worker uploading its task's outputs).
func (c *Client) PutArtifact(ctx context.Context, digest string, body []byte) (api.Artifact, error) {
	return c.PutArtifactFrom(ctx, digest, int64(len(body)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(body)), nil
	})
}

// PutArtifactFrom uploads size bytes under their SHA-256 digest, reading
// them from what open returns (called afresh for each try). Uploading the
// same bytes twice is harmless, so it is retried like a read; a cluster
// that holds the digest already answers before the bytes are sent.
func (c *Client) PutArtifactFrom(ctx context.Context, digest string, size int64, open func() (io.ReadCloser, error)) (api.Artifact, error) {
	opener := func() (io.ReadCloser, int64, error) {
		rc, err := open()
		return rc, size, err
	}
	// Bytes take their time both ways: only ctx bounds the answer.
	ctx = withoutAnswerTimeout(withExpectContinue(withIdempotent(ctx)))
	resp, err := c.sendBody(ctx, "", http.MethodPut, "/v1/artifacts/"+url.PathEscape(digest), opener, "application/octet-stream")
	if err != nil {
		return api.Artifact{}, err
	}
	defer resp.Body.Close()
	var out api.ArtifactResponse
	if err := decodeJSON(resp.Body, &out); err != nil {
		return api.Artifact{}, fmt.Errorf("client: decode artifact answer: %w", err)
	}
	return out.Artifact, nil
}

// PutArtifactFile uploads a file: it hashes it first, then streams it.
func (c *Client) PutArtifactFile(ctx context.Context, path string) (api.Artifact, error) {
	digest, size, err := HashFile(path)
	if err != nil {
		return api.Artifact{}, err
	}
	if size > api.MaxArtifactBody {
		return api.Artifact{}, fmt.Errorf("client: %s is %d bytes; an artifact holds at most %d", path, size, int64(api.MaxArtifactBody))
	}
	return c.PutArtifactFrom(ctx, digest, size, func() (io.ReadCloser, error) { return os.Open(path) })
}

// HashFile returns the SHA-256 digest (64 lowercase hex) and size of a
// file.
func HashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// GetArtifact copies an artifact's bytes to w, hashing them on the way:
// bytes that do not hash to digest end in an error wrapping
// ErrArtifactMismatch (after they were written: the caller discards them).
func (c *Client) GetArtifact(ctx context.Context, digest string, w io.Writer) (int64, error) {
	resp, err := c.sendRaw(withoutAnswerTimeout(ctx), http.MethodGet, "/v1/artifacts/"+url.PathEscape(digest), nil, "")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), resp.Body)
	if err != nil {
		return n, fmt.Errorf("client: reading artifact %s: %w", digest, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return n, fmt.Errorf("client: artifact %s: %w (the %d bytes received hash to %s)", digest, ErrArtifactMismatch, n, got)
	}
	return n, nil
}
