package cluster

import (
	"errors"
	"time"

	"github.com/hashicorp/raft"
)

// Pipeline stall guard. hashicorp/raft (v1.7.2) replicates to a follower
// through a pipeline: a few AppendEntries in flight (MaxRPCsInFlight, 2 by
// default, so its hand-over channels are unbuffered), their answers read
// by the pipeline and handed to a decoder goroutine of raft's. When an
// answer says the follower refused (a failed write on its side: a full
// disk, an fsync error), that decoder returns at once, while the sender
// may be about to hand the pipeline its next request. Nothing takes the
// answers any more, so the pipeline's reader blocks handing over the
// next one, the sender blocks behind it, and replication to that
// follower stops for good, while heartbeats (sent apart) go on, so the
// follower never calls an election either. The fault campaign found it
// (seed 84630: a follower 90 entries behind 30 s after the faults healed,
// its leader's replication goroutine blocked in netPipeline.AppendEntries
// and the pipeline's decodeResponses blocked on its done channel).
//
// The guard: a request the pipeline has not taken within pipelineStall
// closes the pipeline, which unblocks both goroutines; the send then
// fails, and raft drops back to plain replication (with its backoff) and
// builds a new pipeline once the follower has caught up, as it does after
// any pipeline error.

// pipelineStall is how long a pipelined AppendEntries may wait for the
// pipeline to take it before the pipeline is closed.
const pipelineStall = 5 * time.Second

// errPipelineStalled is the error of a send the guard gave up on.
var errPipelineStalled = errors.New("cluster: raft pipeline stalled; closed it to replicate without it")

// guardedTransport is the network transport with its pipelines guarded.
// Embedding keeps the optional transport interfaces raft looks for
// (WithClose, WithPreVote).
type guardedTransport struct {
	*raft.NetworkTransport
	stall time.Duration
}

// AppendEntriesPipeline returns the transport's pipeline, guarded.
func (t guardedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return &guardedPipeline{AppendPipeline: p, stall: t.stall}, nil
}

// guardedPipeline closes its pipeline when a send stalls past stall.
type guardedPipeline struct {
	raft.AppendPipeline
	stall time.Duration
}

// AppendEntries sends through the pipeline, or fails once the pipeline
// has not taken the request within the stall limit (closing it).
func (p *guardedPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	stalled := time.AfterFunc(p.stall, func() { _ = p.AppendPipeline.Close() })
	f, err := p.AppendPipeline.AppendEntries(args, resp)
	if !stalled.Stop() {
		return nil, errPipelineStalled
	}
	return f, err
}
