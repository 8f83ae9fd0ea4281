package view

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A record that lacks a list renders it as an empty list, as the protocol
// shows it, never as null.
func TestMissingListsRenderEmpty(t *testing.T) {
	cases := []struct {
		name string
		view any
		want []string
	}{
		{"worker", Worker(state.WorkerRecord{Worker: state.Worker{ID: "w1"}}), []string{`"capabilities":[]`, `"executors":[]`, `"devices":[]`, `"running_tasks":[]`}},
		{"assignment", Assignment(state.AssignOutcome{Task: state.Task{ID: "t"}}), []string{`"devices":[]`}},
		{"workers", Workers(nil), []string{`[]`}},
		{"audit", AuditEvents(nil), []string{`[]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.view)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
		})
	}
}

func TestJobStateIsDerivedFromItsTasks(t *testing.T) {
	cases := []struct {
		tasks []string
		want  string
	}{
		{[]string{api.TaskPending, api.TaskPending}, api.TaskPending},
		{[]string{api.TaskPending, api.TaskSucceeded}, api.TaskRunning},
		{[]string{api.TaskAssigned, api.TaskSucceeded}, api.TaskRunning},
		{[]string{api.TaskFailed, api.TaskCancelled, api.TaskSucceeded}, api.TaskFailed},
		{[]string{api.TaskCancelled, api.TaskSucceeded}, api.TaskCancelled},
		{[]string{api.TaskSucceeded}, api.TaskSucceeded},
	}
	for _, c := range cases {
		r := state.JobRecord{Job: state.Job{ID: "j"}}
		for _, s := range c.tasks {
			r.Tasks = append(r.Tasks, state.Task{State: s})
		}
		if got := Job(r).State; got != c.want {
			t.Errorf("tasks %v: job %s, want %s", c.tasks, got, c.want)
		}
	}
}
