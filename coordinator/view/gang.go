package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Rendezvous renders a gang that met: every member, by rank.
func Rendezvous(peers []state.GangPeer) api.RendezvousResponse {
	out := api.RendezvousResponse{Ready: true, Peers: make([]api.GangPeer, 0, len(peers))}
	for _, p := range peers {
		out.Peers = append(out.Peers, api.GangPeer{Rank: p.Rank, TaskID: p.TaskID, WorkerID: p.WorkerID, Address: p.Endpoint.Address, Port: p.Endpoint.Port})
	}
	return out
}
