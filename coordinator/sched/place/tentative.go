package place

import "iter"

// Tentative is what a gang placement being planned or checked has given
// each worker so far: its devices, and how many members.
type Tentative struct {
	devices map[string]bool
	count   map[string]int
}

// NewTentative starts with nothing given.
func NewTentative() *Tentative {
	return &Tentative{devices: map[string]bool{}, count: map[string]int{}}
}

// Take gives one member devs on worker workerID.
func (p *Tentative) Take(workerID string, devs []string) {
	p.count[workerID]++
	for _, d := range devs {
		p.devices[d] = true
	}
}

// reserve keeps devs out of the plan without giving them to a member
// (the GPUs a backfill hold keeps for the head).
func (p *Tentative) reserve(devs iter.Seq[string]) {
	for d := range devs {
		p.devices[d] = true
	}
}

// given reports whether device uuid is given or reserved.
func (p *Tentative) given(uuid string) bool { return p.devices[uuid] }

// AnyGiven reports whether any of devs is given or reserved.
func (p *Tentative) AnyGiven(devs []string) bool {
	for _, d := range devs {
		if p.devices[d] {
			return true
		}
	}
	return false
}

// members is how many members worker workerID was given.
func (p *Tentative) members(workerID string) int { return p.count[workerID] }
