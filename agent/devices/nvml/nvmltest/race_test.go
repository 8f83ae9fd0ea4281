//go:build cgo && linux

package nvmltest

import (
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestConcurrentUse configures a machine from the test goroutine while
// other goroutines call NVML on it, as code under test would; run it with
// -race.
func TestConcurrentUse(t *testing.T) {
	const events = 200
	m := New(DGXH100, WithTopology(TopologyNVSwitch))
	lib := m.Interface()
	set := registeredSet(t, lib, nvml.EventTypeXidCriticalError)
	done := make(chan struct{})
	var wg sync.WaitGroup

	// A health watcher: it must see every injected Xid, in order.
	got := make(chan []uint64, 1)
	wg.Go(func() {
		var xids []uint64
		for len(xids) < events {
			ev, ret := set.Wait(10_000)
			switch ret {
			case nvml.SUCCESS:
				xids = append(xids, ev.EventData)
			case nvml.ERROR_TIMEOUT:
			default:
				t.Errorf("Wait = %v", ret)
				got <- xids
				return
			}
		}
		got <- xids
	})

	// Metric and topology readers.
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range m.Count() {
					d, ret := lib.DeviceGetHandleByIndex(i)
					if ret != nvml.SUCCESS {
						continue
					}
					lib.DeviceGetUtilizationRates(d)
					d.GetMemoryInfo()
					d.GetUUID()
					d.GetNvLinkState(0)
					lib.DeviceGetTopologyCommonAncestor(d, m.Device(0))
				}
			}
		})
	}

	// MIG: one goroutine creates GPU instances, another lists and reads
	// them.
	d1 := m.Device(1)
	d1.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	profile, _ := d1.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	wg.Go(func() {
		for range 7 {
			if _, ret := d1.CreateGpuInstance(&profile); ret != nvml.SUCCESS {
				t.Errorf("CreateGpuInstance = %v", ret)
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			gis, _ := d1.GetGpuInstances(&profile)
			for _, gi := range gis {
				gi.GetInfo()
				gi.GetActiveVgpus()
			}
		}
	})

	for k := range events {
		i := k % m.Count()
		m.InjectXid(i, uint64(k))
		m.SetUtilization(i, uint32(k%100), 0)
		m.SetMemoryUsed(i, uint64(k)<<20)
		if k%50 == 0 {
			m.Fail(i, "GetUUID", nvml.ERROR_UNKNOWN, Once)
			m.SetNvLinkState(i, 0, k%100 == 0)
		}
	}
	xids := <-got
	close(done)
	wg.Wait()
	for k, xid := range xids {
		if xid != uint64(k) {
			t.Fatalf("event %d has Xid %d", k, xid)
		}
	}
}
