package view

import (
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// migLayouts renders the MIG layouts asked of a worker's GPUs and shows,
// in place, while one is pending or failed, its GPU and the GPU's MIG
// devices as not offered (PROTOCOL.md, "Devices": a record never shows
// healthy a device that is not offered): health unknown, the reason
// naming the request and keeping what the agent last reported.
func migLayouts(layouts []state.MIGLayout, devices []api.Device) []api.MIGLayout {
	if len(layouts) == 0 {
		return nil
	}
	byGPU := make(map[string]state.MIGLayout, len(layouts))
	out := make([]api.MIGLayout, 0, len(layouts))
	for _, m := range layouts {
		byGPU[m.UUID] = m
		out = append(out, api.MIGLayout{UUID: m.UUID, Layout: nonNil(m.Layout), State: m.State, Reason: m.Reason, RequestedBy: m.By,
			RequestedAt: api.FormatTime(m.At), SettledAt: api.FormatTime(m.SettledAt), Auto: m.Auto})
	}
	for i := range devices {
		d := &devices[i]
		gpu := d.UUID
		if d.Parent != "" {
			gpu = d.Parent
		}
		m, ok := byGPU[gpu]
		if !ok || m.State == state.MIGApplied {
			continue
		}
		why := "MIG repartition to " + layoutWord(m.Layout) + " pending: the agent drains the GPU"
		if m.State == state.MIGFailed {
			why = "MIG repartition to " + layoutWord(m.Layout) + " failed: " + m.Reason
		}
		if d.HealthReason != "" {
			why += "; last reported " + d.Health + ": " + d.HealthReason
		}
		d.Healthy, d.Health, d.HealthReason = false, api.HealthUnknown, why[:min(len(why), api.MaxDeviceHealthReasonBytes)]
	}
	return out
}

func layoutWord(layout []string) string {
	if len(layout) == 0 {
		return "the whole GPU"
	}
	out := ""
	for i, p := range layout {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}
