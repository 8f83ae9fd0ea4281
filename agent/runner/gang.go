package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// errGangStopped: the attempt was stopped while its gang was meeting.
var errGangStopped = errors.New("stopped while waiting for the gang")

// meet takes a gang member through rendezvous: it says where this
// attempt is reached (rank 0 with the port it leased for the master) and
// waits, call after call, until every member has, or the attempt is
// stopped or refused (stale: the gang was ended meanwhile).
func (r *Runner) meet(ctx context.Context, rn *run) ([]api.GangPeer, error) {
	a := rn.a
	req := api.RendezvousRequest{AttemptID: a.AttemptID, Address: r.cfg.Advertise}
	if req.Address == "" {
		req.Address = "127.0.0.1"
	}
	if a.Gang.Rank == 0 {
		port, err := leasePort(req.Address)
		if err != nil {
			return nil, fmt.Errorf("leasing the master's port: %w", err)
		}
		req.Port = port
	}
	backoff := 100 * time.Millisecond
	for {
		type answer struct {
			resp api.RendezvousResponse
			err  error
		}
		callCtx, cancel := context.WithCancel(ctx)
		got := make(chan answer, 1)
		go func() {
			resp, err := r.cfg.Coordinator.Rendezvous(callCtx, a.ID, req)
			got <- answer{resp, err}
		}()
		var ans answer
		select {
		case ans = <-got:
		case <-rn.cancel:
			cancel()
			<-got
			return nil, errGangStopped
		}
		cancel()
		switch {
		case ans.err == nil && ans.resp.Ready:
			return ans.resp.Peers, nil
		case ans.err == nil:
			continue // the wait ended first: call again
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !client.Unavailable(ans.err):
			return nil, ans.err
		}
		r.cfg.Logger.Warn("rendezvous not answered; calling again", "task_id", a.ID, "error", ans.err)
		select {
		case <-r.cfg.Clock.After(backoff):
		case <-rn.cancel:
			return nil, errGangStopped
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// leasePort finds a TCP port free on addr's interface for the master to
// listen on. The port is released before the task binds it, so another
// process could take it first; the task then fails and the gang is
// retried.
func leasePort(addr string) (int, error) {
	host := addr
	if net.ParseIP(addr) == nil {
		host = "" // a host name: any interface
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	tcp, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("listener address %v is not TCP", l.Addr())
	}
	return tcp.Port, nil
}

// gangEnv is what a gang member's process is told of its gang. Two
// views, for the two ways such work is started:
//
//   - one process per task (torch.distributed's env:// init, MPI-like
//     programs): MASTER_ADDR and MASTER_PORT (rank 0's), WORLD_SIZE (the
//     gang's size), RANK (this task's), and, the tasks on one worker
//     making a node ordered by rank, NODE_RANK (GROUP_RANK), LOCAL_RANK
//     and LOCAL_WORLD_SIZE;
//   - one torchrun per task, each task a torchrun node that starts a
//     process per GPU: the PET_* variables torchrun reads its options
//     from, PET_NNODES the gang's size, PET_NODE_RANK this task's rank,
//     PET_NPROC_PER_NODE its GPU count (at least 1). torchrun then sets
//     RANK and the rest for its own children.
func gangEnv(g api.GangMember, peers []api.GangPeer, gpus int) map[string]string {
	master := peers[0]
	me := peers[0]
	nodeOf := map[string]int{}
	for _, p := range peers {
		if _, ok := nodeOf[p.WorkerID]; !ok {
			nodeOf[p.WorkerID] = len(nodeOf)
		}
		if p.Rank == g.Rank {
			me = p
		}
	}
	local, localSize := 0, 0
	for _, p := range peers {
		if p.WorkerID == me.WorkerID {
			if p.Rank < g.Rank {
				local++
			}
			localSize++
		}
	}
	itoa := strconv.Itoa
	node := itoa(nodeOf[me.WorkerID])
	return map[string]string{
		"MASTER_ADDR":      master.Address,
		"MASTER_PORT":      itoa(master.Port),
		"WORLD_SIZE":       itoa(g.Size),
		"RANK":             itoa(g.Rank),
		"NODE_RANK":        node,
		"GROUP_RANK":       node,
		"LOCAL_RANK":       itoa(local),
		"LOCAL_WORLD_SIZE": itoa(localSize),

		"PET_MASTER_ADDR":    master.Address,
		"PET_MASTER_PORT":    itoa(master.Port),
		"PET_NNODES":         itoa(g.Size),
		"PET_NODE_RANK":      itoa(g.Rank),
		"PET_NPROC_PER_NODE": itoa(max(gpus, 1)),

		"GPULAYER_GANG_SIZE": itoa(g.Size),
		"GPULAYER_GANG_RANK": itoa(g.Rank),
	}
}
