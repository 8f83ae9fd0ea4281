// Package stategen builds a coordinator state of a given size quickly, by
// applying commands shaped as the coordinator's handlers make them directly
// to a state.Store (no Raft, no HTTP). S6 uses it to measure memory,
// snapshot and restore at 100,000 finished tasks and 10,000 workers.
package stategen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Bootstrap is a coordinator's bootstrap-credentials.json, so that the
// generated state keeps the cluster's admin and join tokens valid.
type Bootstrap struct {
	Generation  int                        `json:"generation"`
	Credentials []command.CredentialRecord `json:"credentials"`
}

// Options say what to build.
type Options struct {
	Bootstrap Bootstrap
	// NodeID and NodeURL register the coordinator that will hold it.
	NodeID, NodeURL string
	Workers         int
	// Tasks are one-task jobs, each assigned, started, given one log
	// line and finished successfully with a submission id, as an agent
	// finishes.
	Tasks int
	// LogLine is the output each task ships (empty: none).
	LogLine string
	// Spec is the job every task belongs to one of.
	Spec command.JobSpec
	// Devices gives each worker its GPUs.
	Devices func(workerID string) []command.Device
	// Metered gives each task's attempt its worker's first GPU and has
	// its GPU time counted (usage), as a leader that meters assigns;
	// Spec.Resources must then ask for one GPU. Tasks start Spacing
	// apart (default 1 ms) and each runs RunFor (default none).
	Metered         bool
	Spacing, RunFor time.Duration
	// Teams are created and take the tasks' jobs in turn (none: every job
	// is default's); Users name the jobs' submitters in turn (default
	// "admin").
	Teams, Users []string
}

// Build returns a store holding the requested state.
func Build(o Options) (*state.Store, error) {
	s := state.New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apply := func(c command.Command) error {
		res, ok := s.Apply(c).(state.Result)
		if !ok {
			return fmt.Errorf("stategen: %T answered a batch", c)
		}
		return res.Err()
	}
	if err := apply(command.ImportBootstrap{Generation: o.Bootstrap.Generation, Credentials: o.Bootstrap.Credentials, Now: t0}); err != nil {
		return nil, err
	}
	if err := apply(command.RegisterNode{NodeID: o.NodeID, HTTPAddr: o.NodeURL}); err != nil {
		return nil, err
	}
	for _, team := range o.Teams {
		if err := apply(command.CreateTeam{Name: team, Settings: command.TeamSettings{WeightCenti: teams.DefaultWeightCenti}, By: "admin", Now: t0}); err != nil {
			return nil, fmt.Errorf("team %s: %w", team, err)
		}
	}
	if o.Spacing == 0 {
		o.Spacing = time.Millisecond
	}
	workers := make([]string, o.Workers)
	gpu := map[string]string{}
	for i := range workers {
		id := fmt.Sprintf("w%05d", i+1)
		workers[i] = id
		var devs []command.Device
		if o.Devices != nil {
			devs = o.Devices(id)
		}
		if len(devs) > 0 {
			gpu[id] = devs[0].UUID
		}
		if err := apply(command.RegisterWorker{
			WorkerID:     id,
			Credential:   command.CredentialRecord{ID: fmt.Sprintf("%016x", i+1), Kind: "worker", Name: id, Hash: hex64(i), CreatedAt: t0},
			RegisteredBy: "default-join", Capabilities: []string{"*"}, Executors: []string{o.Spec.Executor}, Devices: devs, Now: t0,
		}); err != nil {
			return nil, fmt.Errorf("register %s: %w", id, err)
		}
	}
	for i := range o.Tasks {
		now := t0.Add(time.Duration(i) * o.Spacing)
		end := now.Add(o.RunFor)
		job := fmt.Sprintf("j%016x", i+1)
		task := job + "-0"
		attempt := fmt.Sprintf("%024x", i+1)
		w := workers[i%len(workers)]
		spec := o.Spec
		spec.IdempotencyKey = fmt.Sprintf("%s-%d", o.Spec.IdempotencyKey, i)
		submit := command.SubmitJob{JobID: job, TaskIDs: []string{task}, Spec: spec, CreatedBy: "admin", Now: now}
		if len(o.Teams) > 0 {
			submit.Team = o.Teams[i%len(o.Teams)]
		}
		if len(o.Users) > 0 {
			submit.CreatedBy = o.Users[i%len(o.Users)]
		}
		assign := command.AssignTask{TaskID: task, WorkerID: w, AttemptID: attempt, Now: now}
		if o.Metered {
			assign.Devices, assign.Metered = []string{gpu[w]}, true
		}
		finish, _ := json.Marshal(api.FinishRequest{AttemptID: attempt, SubmissionID: attempt + "-finish"})
		cmds := []command.Command{
			submit,
			assign,
			command.StartTask{TaskID: task, WorkerID: w, AttemptID: attempt, Now: now},
		}
		if o.LogLine != "" {
			cmds = append(cmds, command.AppendLogs{TaskID: task, WorkerID: w, AttemptID: attempt, Stream: api.StreamStdout, Seq: 1, Data: o.LogLine, Now: now})
		}
		cmds = append(cmds, command.FinishTask{TaskID: task, WorkerID: w, AttemptID: attempt, SubmissionID: attempt + "-finish", BodyHash: hex64(len(finish) + i), Now: end})
		for _, c := range cmds {
			if err := apply(c); err != nil {
				return nil, fmt.Errorf("task %d: %T: %w", i, c, err)
			}
		}
	}
	return s, nil
}

func hex64(i int) string {
	h := fmt.Sprintf("%x", i)
	return strings.Repeat("0", 64-len(h)) + h
}
