package httpapi

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/view"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A page also stops at a byte budget, always listing at least one job,
// each job encoded once, and the cursor resumes right after the last job
// listed.
func TestJobsPageByteBudget(t *testing.T) {
	s := state.New()
	for i := range 5 {
		id := fmt.Sprintf("j%d", i)
		s.Apply(command.SubmitJob{JobID: id, TaskIDs: []string{id + "-0"}, CreatedBy: "ci", Now: time.Unix(0, 0).UTC(),
			Spec: command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`)}})
	}
	one, _ := s.JobsPage(0, 1)
	b, err := json.Marshal(view.Job(one[0].Job))
	if err != nil {
		t.Fatal(err)
	}
	budget := 2*len(b) + len(b)/2
	var ids []string
	var before uint64
	pages := 0
	for {
		page, more := s.JobsPage(before, 100)
		jobs, next, err := encodePage(page, more, budget)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(jobs) == 0 || len(jobs) > 2 {
			t.Fatalf("page %d holds %d jobs, want 1 or 2 within the budget", pages, len(jobs))
		}
		for _, raw := range jobs {
			var j api.Job
			if err := json.Unmarshal(raw, &j); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		if next == 0 {
			break
		}
		before = next
	}
	if fmt.Sprint(ids) != "[j4 j3 j2 j1 j0]" || pages != 3 {
		t.Fatalf("%d pages listed %v", pages, ids)
	}
	page, more := s.JobsPage(0, 100)
	if jobs, next, _ := encodePage(page, more, 1); len(jobs) != 1 || next != page[0].Seq {
		t.Fatalf("a budget below one job listed %d jobs (next %d), want 1", len(jobs), next)
	}
}
