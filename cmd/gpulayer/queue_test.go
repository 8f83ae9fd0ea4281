package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The queue table shows the teams in order with their figures on each
// task's row, a gang marked, no reason as a dash, and a team without
// listed tasks on one row.
func TestQueueRendering(t *testing.T) {
	q := api.QueueResponse{Teams: []api.QueueTeam{
		{Team: "speech", GPUsInUse: 0, Weight: 1, Quota: api.GPUAmount{GPUs: 8}, Queued: 0},
		{Team: "vision", GPUsInUse: 8, Weight: 2, Quota: api.GPUAmount{GPUs: 8}, BorrowLimit: &api.GPUAmount{GPUs: 0}, Queued: 2, Tasks: []api.QueueTask{
			{Position: 1, TaskID: "j1-0", JobID: "j1", Priority: 5, GPUs: 2, Gang: true, Reason: "team vision at its quota: 8 of 8 GPUs in use"},
			{Position: 2, TaskID: "j2-0", JobID: "j2", GPUs: 0.25},
		}},
	}}
	var buf bytes.Buffer
	tw := newTable(&buf)
	queueTable(tw, q)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		"TEAM IN USE WEIGHT QUOTA QUEUED POS TASK PRIORITY GPUS REASON",
		"speech 0 1 8+∞ 0 - - - - -",
		"vision 8 2 8+0 2 1 j1-0 5 2 (gang) team vision at its quota: 8 of 8 GPUs in use",
		"vision 8 2 8+0 2 2 j2-0 0 0.25 -",
	}
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", buf.String())
	}
	for i := range want {
		if got := strings.Join(strings.Fields(lines[i]), " "); got != want[i] {
			t.Errorf("line %d: %q, want %q", i, got, want[i])
		}
	}
}
