package command

import "slices"

// Device is one GPU or MIG instance of a worker as the state holds it:
// what its agent reported, and what the coordinators decided about it
// (PendingApproval, Cordoned).
type Device struct {
	Index             int    `json:"index"`
	UUID              string `json:"uuid"`
	Name              string `json:"name"`
	MemoryMiB         uint64 `json:"memory_mib"`
	DriverVersion     string `json:"driver_version,omitempty"`
	CUDAVersion       string `json:"cuda_version,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	PCIDevice         string `json:"pci_device,omitempty"`
	// Healthy says the device may be given work; Health and HealthReason
	// are the agent's word for it and why.
	Healthy         bool   `json:"healthy"`
	Health          string `json:"health,omitempty"`
	HealthReason    string `json:"health_reason,omitempty"`
	PendingApproval bool   `json:"pending_approval,omitempty"`
	MIGEnabled      bool   `json:"mig_enabled,omitempty"`
	Parent          string `json:"parent,omitempty"`
	MIGProfile      string `json:"mig_profile,omitempty"`
	Sharing         string `json:"sharing,omitempty"`
	// MIGRequest and MIGError are the agent's word on the last MIG layout
	// request it acted on for this GPU (state/gpuops/miglayout.go): its
	// generation, and why it failed (empty: applied).
	MIGRequest   uint64       `json:"mig_request,omitempty"`
	MIGError     string       `json:"mig_error,omitempty"`
	Cordoned     bool         `json:"cordoned,omitempty"`
	CordonReason string       `json:"cordon_reason,omitempty"`
	NUMANode     *int         `json:"numa_node,omitempty"`
	Links        []DeviceLink `json:"links,omitempty"`
}

// DeviceLink is how a GPU reaches another GPU of its worker.
type DeviceLink struct {
	Peer    string `json:"peer"`
	Path    string `json:"path"`
	NvLinks int    `json:"nvlinks,omitempty"`
}

// Equal reports whether two device reports say the same: the fields an
// agent reports, not the coordinators' own (PendingApproval, Cordoned,
// CordonReason).
func (d Device) Equal(o Device) bool {
	if !slices.Equal(d.Links, o.Links) || (d.NUMANode == nil) != (o.NUMANode == nil) ||
		(d.NUMANode != nil && *d.NUMANode != *o.NUMANode) {
		return false
	}
	return d.reported() == o.reported()
}

// reportedDevice is what an agent reports of a Device but for its links
// and NUMA node: comparable.
type reportedDevice struct {
	Index                                         int
	UUID, Name                                    string
	MemoryMiB                                     uint64
	DriverVersion, CUDAVersion, ComputeCapability string
	PCIDevice                                     string
	Healthy                                       bool
	Health, HealthReason                          string
	MIGEnabled                                    bool
	Parent, MIGProfile, Sharing                   string
	MIGRequest                                    uint64
	MIGError                                      string
}

func (d Device) reported() reportedDevice {
	return reportedDevice{d.Index, d.UUID, d.Name, d.MemoryMiB, d.DriverVersion, d.CUDAVersion, d.ComputeCapability,
		d.PCIDevice, d.Healthy, d.Health, d.HealthReason, d.MIGEnabled, d.Parent, d.MIGProfile, d.Sharing, d.MIGRequest, d.MIGError}
}

// GroupMember is one member of a group: a worker or another group.
type GroupMember struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// String renders the member as "kind:id".
func (m GroupMember) String() string { return m.Kind + ":" + m.ID }
