package command

import "time"

// SetMIGLayout asks for a GPU's MIG layout: Layout lists the MIG profiles
// its MIG devices are to have ("3g.40gb", ...); an empty one asks for the
// GPU whole, MIG mode off. Clear drops the request instead, accepting the
// GPU as it is. Auto marks a request the coordinator made itself (the
// auto mode, coordinator/migauto) rather than an admin. The agent drains the
// GPU, repartitions it and reports the outcome (state/gpuops/miglayout.go).
type SetMIGLayout struct {
	WorkerID string    `json:"worker_id"`
	UUID     string    `json:"uuid"`
	Layout   []string  `json:"layout,omitempty"`
	Clear    bool      `json:"clear,omitempty"`
	Auto     bool      `json:"auto,omitempty"`
	By       string    `json:"by"`
	Source   string    `json:"source,omitempty"`
	Now      time.Time `json:"now"`
}

func (SetMIGLayout) Type() Type { return TypeSetMIGLayout }
