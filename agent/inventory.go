package agent

import (
	"context"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// DefaultInventoryInterval is how often the agent reads its GPU inventory
// again (Config.InventoryInterval).
const DefaultInventoryInterval = 5 * time.Minute

// rereadInventory reads the GPUs again every interval until ctx ends, so
// that a GPU that appears, goes, or reports another memory size is
// reported by the next heartbeat (which is sent at once). The coordinator
// offers such a GPU only once an admin approves the changed inventory. A
// GPU that appears after the agent started is reported with its health
// unknown: its health is not watched until the agent restarts. A read
// that fails keeps the last inventory (the health watcher, not this,
// takes a lost GPU out of service).
func (a *Agent) rereadInventory(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.cfg.Clock.After(interval):
		}
		devs, err := a.cfg.Devices.Devices(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("reading the GPU inventory again failed; keeping the last one", "error", err)
			}
			continue
		}
		a.mu.Lock()
		old := a.devices
		changed := !sameInventory(old, devs)
		if changed {
			a.devices = devs
		}
		a.mu.Unlock()
		if changed {
			a.readDeviceNodes(ctx)
			a.refreshCDI()
			added, removed := inventoryDiff(old, devs)
			a.log.Warn("GPU inventory changed; the coordinator offers new or changed GPUs once an admin approves them", "gpus", len(devs), "added", added, "removed", removed)
			a.leases.nudgeHeartbeat()
		}
	}
}

// sameInventory reports whether two inventories list the same GPUs with
// the same identity, memory and links (health aside: the tracker owns it).
func sameInventory(a, b []api.Device) bool {
	return slices.EqualFunc(a, b, func(x, y api.Device) bool {
		x.Healthy, x.Health, x.HealthReason = y.Healthy, y.Health, y.HealthReason
		return x.Equal(y)
	})
}

// inventoryDiff lists the UUIDs in next and not in old, and the reverse.
func inventoryDiff(old, next []api.Device) (added, removed []string) {
	has := func(list []api.Device, uuid string) bool {
		return slices.ContainsFunc(list, func(d api.Device) bool { return d.UUID == uuid })
	}
	for _, d := range next {
		if !has(old, d.UUID) {
			added = append(added, d.UUID)
		}
	}
	for _, d := range old {
		if !has(next, d.UUID) {
			removed = append(removed, d.UUID)
		}
	}
	return added, removed
}
