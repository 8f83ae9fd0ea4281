package gpuops

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// MIG layouts. An admin (or the auto mode, migauto.go) asks for a GPU's
// MIG layout (SetMIGLayout): the request is kept on the worker
// (Worker.MIGLayouts), its GPU and the GPU's MIG devices are no longer
// offered (fit.MIGHeld), and each heartbeat answer hands the pending request
// to the agent. The agent waits for the tasks on the GPU to end, within
// its drain bound, repartitions the GPU through NVML, reads its devices
// again and reports them, with the request's generation (MIGRequest) and
// why it failed (MIGError) on the GPU. That report settles the request
// (settleMIGLayouts): applied when the GPU shows the layout asked for,
// whose new MIG devices are then approved with it (the admin asked for
// them; a GPU not approved before stays so); failed, with the agent's
// reason, otherwise. An applied GPU is offered again; a failed one is
// held until an admin asks again or clears the request.
//
// The layout is checked against the model's profiles at the edge
// (httpapi, internal/gpusku), not here: a command that a later catalogue
// would refuse still replays as it was applied.

// MaxMIGLayout bounds a layout's MIG devices: seven slices at most.
const MaxMIGLayout = 7

// SetMIGLayout asks for (or, with c.Clear, drops the request for) the
// MIG layout of one of w's GPUs. Audited.
func SetMIGLayout(fx Effects, w *record.Worker, c command.SetMIGLayout) error {
	if len(c.Layout) > MaxMIGLayout || slices.Contains(c.Layout, "") || (c.Clear && len(c.Layout) > 0) {
		return fmt.Errorf("a MIG layout of %d profiles: %w", len(c.Layout), stateerr.ErrInvalid)
	}
	prev, had := fit.MIGLayoutOf(w, c.UUID)
	if c.Clear {
		if !had {
			return nil
		}
		putMIGLayout(w, record.MIGLayout{UUID: c.UUID}, true)
		fx.MarkPending() // held no longer
		fx.Audit(command.AuditEvent{Time: c.Now, Kind: "gpu.mig_cleared", Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source,
			Detail: prev.State + " " + layoutString(prev.Layout)})
		return nil
	}
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == c.UUID })
	switch {
	case i < 0:
		return fmt.Errorf("worker %s has no GPU %s: %w", w.ID, c.UUID, stateerr.ErrNotFound)
	case w.Devices[i].Parent != "":
		return fmt.Errorf("%s is a MIG device of GPU %s: ask for its GPU's layout: %w", c.UUID, w.Devices[i].Parent, stateerr.ErrInvalid)
	}
	layout := slices.Sorted(slices.Values(c.Layout))
	if had && slices.Equal(prev.Layout, layout) && prev.State != record.MIGFailed && (prev.State == record.MIGPending || migShows(w, c.UUID, layout)) {
		return nil // asked already
	}
	gen := max(uint64(c.Now.UnixNano()), prev.Generation+1)
	putMIGLayout(w, record.MIGLayout{UUID: c.UUID, Layout: layout, Generation: gen, State: record.MIGPending, By: c.By, Auto: c.Auto, At: c.Now}, false)
	kind := "gpu.mig_requested"
	if c.Auto {
		kind = "gpu.mig_auto_requested"
	}
	fx.Audit(command.AuditEvent{Time: c.Now, Kind: kind, Actor: c.By, WorkerID: w.ID, Subject: c.UUID, Source: c.Source, Detail: layoutString(layout)})
	return nil
}

// putMIGLayout replaces (or with drop removes) w's request for m.UUID,
// in a new slice: a capture may hold the old one.
func putMIGLayout(w *record.Worker, m record.MIGLayout, drop bool) {
	out := make([]record.MIGLayout, 0, len(w.MIGLayouts)+1)
	for _, x := range w.MIGLayouts {
		if x.UUID != m.UUID {
			out = append(out, x)
		}
	}
	if !drop {
		out = append(out, m)
		slices.SortFunc(out, func(a, b record.MIGLayout) int { return strings.Compare(a.UUID, b.UUID) })
	}
	if len(out) == 0 {
		out = nil
	}
	w.MIGLayouts = out
}

// SettleMIGLayouts settles the pending requests w's new device report
// answers (see the top of this file).
func SettleMIGLayouts(fx Effects, w *record.Worker, now time.Time) {
	for _, m := range w.MIGLayouts {
		if m.State != record.MIGPending {
			continue
		}
		i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == m.UUID && d.Parent == "" })
		if i < 0 || w.Devices[i].MIGRequest != m.Generation {
			continue // not acted on yet
		}
		gpu := w.Devices[i]
		m.SettledAt = now
		switch {
		case gpu.MIGError != "":
			m.State, m.Reason = record.MIGFailed, gpu.MIGError
		case !migShows(w, m.UUID, m.Layout):
			m.State, m.Reason = record.MIGFailed, "the agent reported the layout applied, but the GPU shows "+layoutString(shownLayout(w, m.UUID))
		default:
			m.State = record.MIGApplied
			approveRepartition(w, m.UUID)
		}
		m.Layout = slices.Clone(m.Layout)
		putMIGLayout(w, m, false)
		fx.MarkPending()
		kind, detail := "gpu.mig_applied", layoutString(m.Layout)
		if m.State == record.MIGFailed {
			kind, detail = "gpu.mig_failed", detail+": "+m.Reason
		}
		fx.Audit(command.AuditEvent{Time: now, Kind: kind, Actor: m.By, WorkerID: w.ID, Subject: m.UUID, Detail: detail})
	}
}

// shownLayout is the profiles of GPU uuid's MIG devices in w's report,
// sorted.
func shownLayout(w *record.Worker, uuid string) []string {
	var out []string
	for _, d := range w.Devices {
		if d.Parent == uuid {
			out = append(out, d.MIGProfile)
		}
	}
	slices.Sort(out)
	return out
}

// migShows reports whether GPU uuid of w shows layout: its MIG devices
// have those profiles, and it is in MIG mode exactly when layout has any.
func migShows(w *record.Worker, uuid string, layout []string) bool {
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == uuid })
	return i >= 0 && w.Devices[i].MIGEnabled == (len(layout) > 0) && slices.Equal(shownLayout(w, uuid), layout)
}

// approveRepartition approves GPU uuid's new MIG mode and MIG devices,
// which an admin (or the auto mode) asked for, when the GPU itself was
// approved: a repartition never brings an unapproved GPU into service.
func approveRepartition(w *record.Worker, uuid string) {
	ApproveLegacy(w)
	i := slices.IndexFunc(w.Devices, func(d command.Device) bool { return d.UUID == uuid })
	if mib, ok := w.ApprovedDevices[uuid]; !ok || mib != w.Devices[i].MemoryMiB {
		return
	}
	devices, identity := maps.Clone(w.ApprovedDevices), maps.Clone(w.ApprovedIdentity)
	for _, d := range w.Devices {
		if d.UUID == uuid || d.Parent == uuid {
			devices[d.UUID] = d.MemoryMiB
			if identity != nil {
				identity[d.UUID] = fit.Identity(d)
			}
		}
	}
	w.ApprovedDevices, w.ApprovedIdentity = devices, identity
}

// layoutString writes a layout as the CLI takes it: "3g.40gb,3g.40gb", or
// "whole" for none.
func layoutString(layout []string) string {
	if len(layout) == 0 {
		return "whole (MIG off)"
	}
	return strings.Join(layout, ",")
}
