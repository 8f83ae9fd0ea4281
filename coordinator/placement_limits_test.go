package coordinator_test

// max_per_worker and exclusive_worker over the real HTTP server: workers
// registered through the API ask for work the way the agent does (acquire
// with max_tasks for their free slots, wait_seconds 0 so an empty answer
// comes back at once), and finish what they got.

import (
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// acquireAll asks, without waiting, for up to n tasks and returns what
// the worker got (none is an empty list).
func acquireAll(t *testing.T, w *client.Client, n int) []api.Assignment {
	t.Helper()
	acq, err := w.Acquire(t.Context(), api.AcquireRequest{MaxTasks: n})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if len(acq.Tasks) > 0 {
		return acq.Tasks
	}
	if acq.Task != nil {
		return []api.Assignment{*acq.Task}
	}
	return nil
}

// finishTask starts and finishes a (an assignment of w) with exit code 0.
func finishTask(t *testing.T, w *client.Client, a api.Assignment) {
	t.Helper()
	if err := w.Start(t.Context(), a.ID, a.AttemptID); err != nil {
		t.Fatalf("start %s: %v", a.ID, err)
	}
	if task, err := w.Finish(t.Context(), a.ID, api.FinishRequest{AttemptID: a.AttemptID}); err != nil || task.State != api.TaskSucceeded {
		t.Fatalf("finish %s: %+v %v", a.ID, task, err)
	}
}

// ofJob counts the assignments that belong to job.
func ofJob(got []api.Assignment, job string) int {
	n := 0
	for _, a := range got {
		if a.JobID == job {
			n++
		}
	}
	return n
}

// taskIDs lists the ids of got, for messages.
func taskIDs(got []api.Assignment) []string {
	ids := make([]string, len(got))
	for i, a := range got {
		ids[i] = a.ID
	}
	return ids
}

func submitSpec(t *testing.T, admin *client.Client, spec api.JobSpec) api.Job {
	t.Helper()
	spec.Executor, spec.Config = "exec", trueConfig
	job, err := admin.SubmitJob(t.Context(), spec)
	if err != nil {
		t.Fatalf("submit %+v: %v", spec, err)
	}
	return job
}

// A job with max_per_worker 1 and three tasks: a worker asking for as many
// tasks as it likes gets one of them (and other jobs' work beside it),
// another worker gets the next, and the first gets the third only once
// its own has ended. The stored job says who ran what.
func TestMaxPerWorkerOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	a, _ := fleetWorker(t, h, "limit-a")
	b, _ := fleetWorker(t, h, "limit-b")

	limited := submitSpec(t, admin, api.JobSpec{Count: 3, MaxPerWorker: 1, Priority: 10})
	if limited.MaxPerWorker != 1 || len(limited.Tasks) != 3 {
		t.Fatalf("stored job: max_per_worker %d, %d tasks", limited.MaxPerWorker, len(limited.Tasks))
	}
	plain := submitSpec(t, admin, api.JobSpec{Count: 2})

	// a has room for 8 and the limited job ranks first, yet a gets one of
	// its tasks; the rest of its room goes to the plain job.
	gotA := acquireAll(t, a, 8)
	if ofJob(gotA, limited.ID) != 1 || ofJob(gotA, plain.ID) != 2 || len(gotA) != 3 {
		t.Fatalf("worker a got %v; want one task of %s and both of %s", taskIDs(gotA), limited.ID, plain.ID)
	}
	if again := acquireAll(t, a, 8); len(again) != 0 {
		t.Fatalf("worker a, already running one task of %s, got %v", limited.ID, taskIDs(again))
	}
	gotB := acquireAll(t, b, 8)
	if len(gotB) != 1 || gotB[0].JobID != limited.ID {
		t.Fatalf("worker b got %v; want the next task of %s only", taskIDs(gotB), limited.ID)
	}
	if again := acquireAll(t, b, 8); len(again) != 0 {
		t.Fatalf("worker b, already running one task of %s, got %v", limited.ID, taskIDs(again))
	}

	// The third task waits for a slot of the job on a worker: a's ends.
	for _, as := range gotA {
		if as.JobID == limited.ID {
			finishTask(t, a, as)
		}
	}
	third := acquireAll(t, a, 8)
	if len(third) != 1 || third[0].JobID != limited.ID {
		t.Fatalf("worker a, its task of %s done, got %v; want the third", limited.ID, taskIDs(third))
	}

	job, err := admin.Job(t.Context(), limited.ID)
	if err != nil {
		t.Fatal(err)
	}
	perWorker := map[string]int{}
	for _, task := range job.Tasks {
		if task.State == api.TaskAssigned || task.State == api.TaskRunning {
			perWorker[task.WorkerID]++
		}
	}
	if len(perWorker) != 2 || perWorker["limit-a"] != 1 || perWorker["limit-b"] != 1 {
		t.Fatalf("active tasks of %s per worker: %v; want one on each of limit-a and limit-b", limited.ID, perWorker)
	}
}

// A limit above one: a worker takes that many of the job's tasks in one
// acquire and no more.
func TestMaxPerWorkerTwoOverHTTP(t *testing.T) {
	h := coordinatortest.Start(t, coordinatortest.Options{})
	admin := h.Client(t, h.AdminToken)
	a, _ := fleetWorker(t, h, "limit-a")
	b, _ := fleetWorker(t, h, "limit-b")
	job := submitSpec(t, admin, api.JobSpec{Count: 5, MaxPerWorker: 2})
	if got := acquireAll(t, a, 8); len(got) != 2 || ofJob(got, job.ID) != 2 {
		t.Fatalf("worker a got %v; want two tasks of %s", taskIDs(got), job.ID)
	}
	if got := acquireAll(t, b, 8); len(got) != 2 || ofJob(got, job.ID) != 2 {
		t.Fatalf("worker b got %v; want two tasks of %s", taskIDs(got), job.ID)
	}
	if got := acquireAll(t, a, 8); len(got) != 0 {
		t.Fatalf("worker a, at its limit, got %v", taskIDs(got))
	}
}

// exclusive_worker: a worker running an exclusive task is handed nothing
// else, and an exclusive task goes to no worker that runs something,
// whichever came first; also within one acquire for many tasks.
func TestExclusiveWorkerOverHTTP(t *testing.T) {
	t.Run("a worker running an exclusive task gets nothing else", func(t *testing.T) {
		h := coordinatortest.Start(t, coordinatortest.Options{})
		admin := h.Client(t, h.AdminToken)
		a, _ := fleetWorker(t, h, "excl-a")
		b, _ := fleetWorker(t, h, "excl-b")

		excl := submitSpec(t, admin, api.JobSpec{ExclusiveWorker: true})
		if !excl.ExclusiveWorker {
			t.Fatalf("stored job lost exclusive_worker: %+v", excl.JobSpec)
		}
		got := acquireAll(t, a, 1)
		if len(got) != 1 || got[0].JobID != excl.ID {
			t.Fatalf("worker a got %v; want the exclusive task of %s", taskIDs(got), excl.ID)
		}
		exclTask := got[0]
		if err := a.Start(t.Context(), exclTask.ID, exclTask.AttemptID); err != nil {
			t.Fatal(err)
		}
		plain := submitSpec(t, admin, api.JobSpec{Count: 3})
		if more := acquireAll(t, a, 8); len(more) != 0 {
			t.Fatalf("worker a, running exclusive %s, got %v", exclTask.ID, taskIDs(more))
		}
		if other := acquireAll(t, b, 8); len(other) != 3 || ofJob(other, plain.ID) != 3 {
			t.Fatalf("worker b got %v; want all three tasks of %s", taskIDs(other), plain.ID)
		}

		// Once the exclusive task ends, a takes work again.
		if task, err := a.Finish(t.Context(), exclTask.ID, api.FinishRequest{AttemptID: exclTask.AttemptID}); err != nil || task.State != api.TaskSucceeded {
			t.Fatalf("finish %s: %+v %v", exclTask.ID, task, err)
		}
		later := submitSpec(t, admin, api.JobSpec{Count: 2})
		if got := acquireAll(t, a, 8); len(got) != 2 || ofJob(got, later.ID) != 2 {
			t.Fatalf("worker a, its exclusive task done, got %v; want both tasks of %s", taskIDs(got), later.ID)
		}
	})

	t.Run("an exclusive task goes to no busy worker", func(t *testing.T) {
		h := coordinatortest.Start(t, coordinatortest.Options{})
		admin := h.Client(t, h.AdminToken)
		a, _ := fleetWorker(t, h, "excl-a")
		b, _ := fleetWorker(t, h, "excl-b")

		plain := submitSpec(t, admin, api.JobSpec{})
		if got := acquireAll(t, a, 1); len(got) != 1 || got[0].JobID != plain.ID {
			t.Fatalf("worker a got %v; want the task of %s", taskIDs(got), plain.ID)
		}
		excl := submitSpec(t, admin, api.JobSpec{ExclusiveWorker: true, Count: 2, Priority: 100})
		if got := acquireAll(t, a, 8); len(got) != 0 {
			t.Fatalf("worker a, running a task of %s, got %v", plain.ID, taskIDs(got))
		}
		// b is idle: it takes one exclusive task, and then is busy for the
		// second one too, though it asked for room for eight.
		got := acquireAll(t, b, 8)
		if len(got) != 1 || got[0].JobID != excl.ID {
			t.Fatalf("idle worker b got %v; want one exclusive task of %s", taskIDs(got), excl.ID)
		}
		job, err := admin.Job(t.Context(), excl.ID)
		if err != nil {
			t.Fatal(err)
		}
		states := map[string]int{}
		for _, task := range job.Tasks {
			states[task.State]++
			if task.State == api.TaskAssigned && task.WorkerID != "excl-b" {
				t.Fatalf("exclusive task %s went to %s", task.ID, task.WorkerID)
			}
		}
		if states[api.TaskAssigned] != 1 || states[api.TaskPending] != 1 {
			t.Fatalf("exclusive job's tasks by state: %v; want one assigned, one pending", states)
		}
	})

	t.Run("one acquire for many tasks stops at an exclusive one", func(t *testing.T) {
		h := coordinatortest.Start(t, coordinatortest.Options{})
		admin := h.Client(t, h.AdminToken)
		a, _ := fleetWorker(t, h, "excl-a")

		// The exclusive job ranks first: the worker gets it and nothing
		// after it.
		excl := submitSpec(t, admin, api.JobSpec{ExclusiveWorker: true, Priority: 5})
		plain := submitSpec(t, admin, api.JobSpec{Count: 3})
		got := acquireAll(t, a, 8)
		if len(got) != 1 || got[0].JobID != excl.ID {
			t.Fatalf("worker a got %v; want only the exclusive task of %s", taskIDs(got), excl.ID)
		}
		finishTask(t, a, got[0])

		// A plain job ranks first: the worker fills its room with plain
		// work and leaves the exclusive task pending.
		excl2 := submitSpec(t, admin, api.JobSpec{ExclusiveWorker: true, Priority: -5})
		got = acquireAll(t, a, 8)
		if len(got) != 3 || ofJob(got, plain.ID) != 3 {
			t.Fatalf("worker a got %v; want the three tasks of %s and not %s", taskIDs(got), plain.ID, excl2.ID)
		}
		job, err := admin.Job(t.Context(), excl2.ID)
		if err != nil || job.Tasks[0].State != api.TaskPending {
			t.Fatalf("exclusive job %s: %+v %v; want its task pending", excl2.ID, job.Tasks, err)
		}
	})
}
