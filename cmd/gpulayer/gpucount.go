package main

import "github.com/gpulayer/gpulayer/sdk/api"

// gpuCounts sorts a worker's GPUs (or a fleet's) into those given work
// (healthy), those that await an admin's approval, and the rest
// (unhealthy, recovering, unknown, cordoned, or on a worker that is
// offline, revoked or draining: the coordinator shows none of those
// healthy); cordoned counts the cordoned ones among the rest.
type gpuCounts struct{ healthy, unhealthy, awaiting, cordoned int }

func countGPUs(devs []api.Device) gpuCounts {
	var n gpuCounts
	for _, d := range devs {
		switch {
		case d.PendingApproval:
			n.awaiting++
		case d.Healthy:
			n.healthy++
		default:
			n.unhealthy++
			if d.Cordoned {
				n.cordoned++
			}
		}
	}
	return n
}
