package api

// MIGLayoutRequest is the body of PUT /v1/workers/{id}/devices/{uuid}/mig
// (admin): the MIG profiles the GPU is to be split into, e.g.
// ["3g.40gb","3g.40gb"]; an empty list asks for the GPU whole, MIG mode
// off. Each profile must be one of the GPU model's, and together they
// must fit the GPU (docs/gpus.md, "Repartitioning MIG").
type MIGLayoutRequest struct {
	Layout []string `json:"layout"`
}

// MaxMIGLayout bounds a layout's profiles: seven slices at most.
const MaxMIGLayout = 7

// MIG layout request states, in a device record's MIGLayout.
const (
	MIGLayoutPending = "pending"
	MIGLayoutApplied = "applied"
	MIGLayoutFailed  = "failed"
)

// MIGLayout is, in a worker's record (mig_layouts), the MIG layout last
// asked of one of its GPUs: pending (the GPU takes no new task while its
// agent drains and repartitions it), applied, or failed with the agent's
// reason (the GPU stays out of service until a new request or DELETE
// .../mig). The GPU's device record says the same in its health_reason
// while it is held.
type MIGLayout struct {
	UUID        string   `json:"uuid"`
	Layout      []string `json:"layout"`
	State       string   `json:"state"`
	Reason      string   `json:"reason,omitempty"`
	RequestedBy string   `json:"requested_by"`
	RequestedAt string   `json:"requested_at"`
	SettledAt   string   `json:"settled_at,omitempty"`
	// Auto marks a request the coordinator's auto mode made.
	Auto bool `json:"auto,omitempty"`
}

// MIGLayoutOrder is, in a heartbeat answer's mig_layouts, a layout the
// agent is to give one of its GPUs: it drains the GPU, repartitions it,
// and reports the Generation it acted on in the GPU's mig_request (with
// mig_error when it failed).
type MIGLayoutOrder struct {
	UUID       string   `json:"uuid"`
	Layout     []string `json:"layout"`
	Generation uint64   `json:"generation"`
}
