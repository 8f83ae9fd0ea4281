package fit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
)

// An approval binds each GPU's UUID to its memory (ApprovedDevices) and
// to its identity: everything else about it that placement and the join
// token's model pin trust, which an agent could otherwise re-report
// (another model on an approved UUID). The identity is a digest of the
// model name, compute capability, PCI id, MIG mode, parent and profile,
// sharing, NUMA node and links (sorted by peer); what changes while a GPU
// runs (health, driver and CUDA versions, its index) is left out, so that
// a driver upgrade needs no approval. A GPU whose identity differs from
// the approved one awaits approval as a new one does (Approved).
//
// record.Worker.ApprovedIdentity maps each approved GPU's UUID to its identity.
// A worker approved before it was kept has none (nil) beside its
// ApprovedDevices: at its next report the identity its GPUs had before
// that report is bound (bindLegacyIdentity), so that the report itself
// cannot change a model unseen.

// Identity is d's identity, a hex digest.
func Identity(d command.Device) string {
	var b strings.Builder
	numa := "-"
	if d.NUMANode != nil {
		numa = fmt.Sprint(*d.NUMANode)
	}
	fmt.Fprintf(&b, "name=%q cc=%q pci=%q mig=%t parent=%q profile=%q sharing=%q numa=%s",
		d.Name, d.ComputeCapability, d.PCIDevice, d.MIGEnabled, d.Parent, d.MIGProfile, d.Sharing, numa)
	links := slices.Clone(d.Links)
	slices.SortFunc(links, func(a, b command.DeviceLink) int { return strings.Compare(a.Peer, b.Peer) })
	for _, l := range links {
		fmt.Fprintf(&b, " link=%q/%q/%d", l.Peer, l.Path, l.NvLinks)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// Identities is the approved identity of devs.
func Identities(devs []command.Device) map[string]string {
	m := make(map[string]string, len(devs))
	for _, d := range devs {
		m[d.UUID] = Identity(d)
	}
	return m
}

// sameIdentity reports whether d is as w's approved identities have it;
// a worker without them (approved before they were kept) binds none.
func sameIdentity(w *record.Worker, d command.Device) bool {
	if w.ApprovedIdentity == nil {
		return true
	}
	id, ok := w.ApprovedIdentity[d.UUID]
	return ok && id == memoIdentity(d) // identitymemo.go
}

// BindLegacyIdentity binds, for a worker approved before identities were
// kept, the identity of its GPUs approved now, as they stand before the
// report that replaces them.
func BindLegacyIdentity(w *record.Worker) {
	if w.ApprovedIdentity != nil || w.ApprovedDevices == nil {
		return
	}
	w.ApprovedIdentity = map[string]string{}
	for _, d := range w.Devices {
		if mib, ok := w.ApprovedDevices[d.UUID]; ok && mib == d.MemoryMiB {
			w.ApprovedIdentity[d.UUID] = Identity(d)
		}
	}
}
