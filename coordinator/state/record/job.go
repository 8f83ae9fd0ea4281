package record

import (
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

// Job is a submitted job.
type Job struct {
	ID        string          `json:"id"`
	Spec      command.JobSpec `json:"spec"`
	SpecHash  string          `json:"spec_hash"`
	CreatedBy string          `json:"created_by"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	TaskIDs   []string        `json:"task_ids"`
	Seq       uint64          `json:"seq"`
	// Team is the team the job runs for (empty: written before teams,
	// command.DefaultTeam's).
	Team string `json:"team,omitempty"`

	// affinity holds Spec.Affinity's rules, read once when the job is
	// created or restored (Rules); nil when it has none. Out of line, so
	// that a job record is 440 bytes (the 448 size class), not 456
	// (480).
	affinity *jobAffinity
}

// jobAffinity is a job's affinity rules as parsed; never changed once
// made, so that copies of the job share it.
type jobAffinity struct{ rules []command.AffinityRule }

// Rules are the job's affinity rules as SetRules kept them (nil: none).
func (j *Job) Rules() []command.AffinityRule {
	if j.affinity == nil {
		return nil
	}
	return j.affinity.rules
}

// SetRules keeps rules as the job's affinity rules. They are never
// changed afterwards: copies of the job share them.
func (j *Job) SetRules(rules []command.AffinityRule) {
	j.affinity = nil
	if len(rules) > 0 {
		j.affinity = &jobAffinity{rules: rules}
	}
}
