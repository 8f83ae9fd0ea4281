package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// AffinityRule is one rule of a job's affinity (JobSpec.Affinity, a JSON
// array of them). It names workers by exactly one selector: a worker id,
// a group (its members, nested groups included) or a worker label
// (Label, with Value; an empty Value matches any worker that has the
// label).
//
// A soft rule has a Weight from -100 to 100, not 0: a worker that matches
// it scores the weight, and a task waits a short while (the coordinator's
// affinity wait) for a live worker with the best score before any other
// takes it. A Required rule is a hard filter: with a Weight of 0 or more
// only matching workers take the task, with a negative Weight none of
// them does. See docs/protocol.md, "Affinity and spread".
type AffinityRule struct {
	Worker   string `json:"worker,omitempty"`
	Group    string `json:"group,omitempty"`
	Label    string `json:"label,omitempty"`
	Value    string `json:"value,omitempty"`
	Weight   int    `json:"weight,omitempty"`
	Required bool   `json:"required,omitempty"`
}

// Affinity bounds.
const (
	MaxAffinityRules  = 16
	MaxAffinityWeight = 100
	MaxLabelBytes     = 256
)

// ErrAffinity marks a malformed affinity.
var ErrAffinity = errors.New("affinity")

// Repels reports whether the rule keeps matching workers away.
func (r AffinityRule) Repels() bool { return r.Weight < 0 }

// ParseAffinity decodes and checks a job's affinity: absent or null is
// no rule at all.
func ParseAffinity(raw json.RawMessage) ([]AffinityRule, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rules []AffinityRule
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("%w: want an array of rules ({worker|group|label, value?, weight, required?}): %v", ErrAffinity, err)
	}
	if len(rules) > MaxAffinityRules {
		return nil, fmt.Errorf("%w: %d rules, at most %d", ErrAffinity, len(rules), MaxAffinityRules)
	}
	for i, r := range rules {
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%w: rule %d: %v", ErrAffinity, i, err)
		}
	}
	return rules, nil
}

func (r AffinityRule) check() error {
	selectors := 0
	for _, s := range []string{r.Worker, r.Group, r.Label} {
		if s != "" {
			selectors++
		}
	}
	switch {
	case selectors != 1:
		return errors.New("name exactly one of worker, group and label")
	case r.Value != "" && r.Label == "":
		return errors.New("value goes with label")
	case len(r.Worker) > MaxIDBytes || len(r.Group) > MaxIDBytes:
		return fmt.Errorf("an id is at most %d bytes", MaxIDBytes)
	case len(r.Label) > MaxLabelBytes || len(r.Value) > MaxLabelBytes:
		return fmt.Errorf("a label or value is at most %d bytes", MaxLabelBytes)
	case r.Weight < -MaxAffinityWeight || r.Weight > MaxAffinityWeight:
		return fmt.Errorf("weight %d: between -%d and %d", r.Weight, MaxAffinityWeight, MaxAffinityWeight)
	case r.Weight == 0 && !r.Required:
		return errors.New("a soft rule needs a weight other than 0 (or say required)")
	}
	return nil
}
