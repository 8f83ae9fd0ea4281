package faults

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// Artifacts under the faults: an uploader puts small artifacts through
// the whole fault phase, and every upload the cluster acknowledged must
// be readable, byte for byte, from every node of the configuration once
// it is healed, whichever nodes were killed, cut off or wiped meanwhile
// (an acknowledgement means two coordinators held the bytes).

// uploadEvery is how often the uploader puts an artifact.
const uploadEvery = 150 * time.Millisecond

// acked are the artifacts the cluster acknowledged, by digest.
type acked struct {
	mu    sync.Mutex
	bytes map[string][]byte
}

func (a *acked) add(digest string, b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.bytes[digest] = b
}

func (a *acked) snapshot() map[string][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string][]byte, len(a.bytes))
	for d, b := range a.bytes {
		out[d] = b
	}
	return out
}

// upload puts a fresh artifact of 1 to 4 KiB every uploadEvery until ctx
// ends, each once (an upload that fails is not acknowledged, and not
// checked), and keeps those acknowledged.
func (r *run) upload(ctx context.Context, seed uint64, into *acked) {
	rng := rand.New(rand.NewPCG(seed, 11))
	c, err := client.New(client.Config{Addrs: r.urls, Token: r.c.AdminToken, MaxRetryWait: 3 * time.Second})
	if err != nil {
		r.problem("uploader: %v", err)
		return
	}
	for ctx.Err() == nil {
		b := make([]byte, 1024+rng.IntN(3*1024))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		sum := sha256.Sum256(b)
		digest := hex.EncodeToString(sum[:])
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		if _, err := c.PutArtifact(cctx, digest, b); err == nil {
			into.add(digest, b)
		}
		cancel()
		select {
		case <-time.After(uploadEvery):
		case <-ctx.Done():
		}
	}
}

// checkArtifacts reads every acknowledged artifact from every node of the
// configuration, each asked alone, and reports those a node cannot serve
// or serves wrong. A node answers from its copy or relays a holder's, so
// a read that fails is retried for a few seconds (a restarted node may
// still be finding its leader) before it counts.
func (r *run) checkArtifacts(ctx context.Context, up *acked) int {
	arts := up.snapshot()
	for _, n := range r.members() {
		c, err := client.New(client.Config{Addrs: []string{n.URL}, Token: r.c.AdminToken, MaxRetryWait: 3 * time.Second})
		if err != nil {
			r.problem("artifact check: %v", err)
			continue
		}
		for digest, want := range arts {
			var got bytes.Buffer
			var err error
			for deadline := time.Now().Add(10 * time.Second); ; {
				got.Reset()
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				_, err = c.GetArtifact(cctx, digest, &got)
				cancel()
				if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
					break
				}
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
				}
			}
			switch {
			case err != nil:
				r.problem("acknowledged artifact %s…: node %s cannot serve it: %v", digest[:12], n.ID, err)
			case !bytes.Equal(got.Bytes(), want):
				r.problem("acknowledged artifact %s…: node %s serves %d other bytes", digest[:12], n.ID, got.Len())
			}
		}
	}
	return len(arts)
}
