package state

import (
	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Affinity and spread: the rules are placement's (package place,
// affinity.go); the state keeps each job's parsed rules on its record.

// rulesOf reads a job's affinity rules. A job stored before the rules'
// shape was checked at submit may hold something else: it has none.
func rulesOf(spec command.JobSpec) []command.AffinityRule {
	rules, err := command.ParseAffinity(spec)
	if err != nil {
		return nil
	}
	return rules
}
