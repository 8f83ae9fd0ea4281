package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// The usage table and CSV show the grouping's columns beside the team,
// GPU-hours in the table and the API's GPU-seconds in the CSV.
func TestUsageRendering(t *testing.T) {
	u := api.UsageResponse{GroupBy: api.UsageByJob, Rows: []api.UsageRow{
		{Team: "vision", User: "alice", JobID: "j1", GPUSeconds: 7200, PreemptedGPUSeconds: 1800, Tasks: 2},
	}}
	var tbl bytes.Buffer
	tw := newTable(&tbl)
	usageTable(tw, u)
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tbl.String()), "\n")
	if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "TEAM USER JOB GPU-HOURS PREEMPTED GPU-HOURS TASKS" ||
		strings.Join(strings.Fields(lines[1]), " ") != "vision alice j1 2.00 0.50 2" {
		t.Errorf("table:\n%s", tbl.String())
	}
	var csvOut bytes.Buffer
	if err := usageCSV(&csvOut, u); err != nil {
		t.Fatal(err)
	}
	if want := "team,user,job_id,gpu_seconds,preempted_gpu_seconds,tasks\nvision,alice,j1,7200,1800,2\n"; csvOut.String() != want {
		t.Errorf("csv:\n%q\nwant\n%q", csvOut.String(), want)
	}
}

// -o csv is refused by every command but usage, as a usage error.
func TestCSVOnlyWhereOffered(t *testing.T) {
	o := &outputFlags{format: formatCSV}
	if err := o.print(nil, nil); err == nil || !strings.Contains(err.Error(), "usage only") {
		t.Errorf("print with csv: %v", err)
	}
}
