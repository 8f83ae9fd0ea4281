package snapcodec

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/record"
	"github.com/gpulayer/gpulayer/coordinator/state/stateerr"
)

// A restored snapshot replaces the state whole, and the commands applied
// after it take the state's own word for what its records say of each
// other: a job's task ids name tasks of that job, a task held by a worker
// has a current attempt on that worker, an idempotency key names a job.
// A snapshot whose records contradict each other (a crafted or damaged
// upload) would restore, and the next command touching them would panic
// the FSM, on every node and on every replay of the log. Check refuses
// such a snapshot before it replaces anything, naming the first
// contradiction in the snapshot's own order (ErrInvalid).
//
// Ids listed twice, tasks of a job the snapshot lacks and task ids out of
// their form are refused while the state fills its tables; what needs the
// tables whole is checked here, through the lookups of the tables the
// state filled (Loaded).

// known vocabularies.
var (
	credentialKinds = []string{creds.KindClient, creds.KindJoin, creds.KindInstance, creds.KindWorker}
	workerStatuses  = []string{record.WorkerPending, record.WorkerReady, record.WorkerOffline, record.WorkerRevoked, record.WorkerDraining, record.WorkerStopping}
	taskStates      = []string{record.TaskPending, record.TaskAssigned, record.TaskRunning, record.TaskSucceeded, record.TaskFailed, record.TaskCancelled}
)

// Loaded is the tables a restore filled from an image, by id: what the
// checks need of them whole.
type Loaded struct {
	Task   func(id string) *record.Task // nil when there is none
	Job    func(id string) *record.Job  // nil when there is none
	Worker func(id string) bool
}

// Check refuses an image whose records contradict each other, naming
// the first contradiction in the image's own order (stateerr.ErrInvalid).
func (snap *Image) Check(l Loaded) error {
	var listed int // task ids the jobs list: distinct, once checkJobs passes
	checkJobs := func() (err error) {
		listed, err = snap.checkJobs(l)
		return err
	}
	checkTasks := func() error { return snap.checkTasks(l, listed == len(snap.Tasks)) }
	checkIdempotency := func() error { return snap.checkIdempotency(l) }
	for _, check := range []func() error{snap.checkCredentials, snap.checkWorkers, checkJobs, checkTasks, checkIdempotency} {
		if err := check(); err != nil {
			return fmt.Errorf("%w: %w", err, stateerr.ErrInvalid)
		}
	}
	return nil
}

func (snap *Image) checkCredentials() error {
	for _, c := range snap.Credentials {
		switch {
		case c.ID == "":
			return fmt.Errorf("a credential has no id")
		case !slices.Contains(credentialKinds, c.Kind):
			return fmt.Errorf("credential %s is of unknown kind %q", c.ID, c.Kind)
		case c.Hash == "":
			return fmt.Errorf("credential %s has no hash", c.ID)
		case c.Kind == creds.KindWorker && c.WorkerID == "":
			return fmt.Errorf("worker credential %s names no worker", c.ID)
		}
	}
	return nil
}

func (snap *Image) checkWorkers() error {
	for _, w := range snap.Workers {
		switch {
		case w.ID == "":
			return fmt.Errorf("a worker has no id")
		case !slices.Contains(workerStatuses, w.Status):
			return fmt.Errorf("worker %s is in unknown status %q", w.ID, w.Status)
		}
	}
	return nil
}

// checkJobs checks each job's sequence number (after the job before it,
// not past the store's, which numbers the next) and that its task ids
// name its own tasks, once each; it returns how many task ids the jobs
// list. Those are then distinct tasks (a task has one job), so every task
// is listed when there are as many as tasks.
func (snap *Image) checkJobs(l Loaded) (int, error) {
	var last uint64
	listed := 0
	seen := map[string]struct{}{}
	for i, j := range snap.Jobs {
		switch {
		case j.Seq > snap.Seq:
			return 0, fmt.Errorf("job %s has sequence %d, past the store's %d", j.ID, j.Seq, snap.Seq)
		case i > 0 && j.Seq <= last:
			return 0, fmt.Errorf("job %s has sequence %d, not after the job before it (%d)", j.ID, j.Seq, last)
		}
		last = j.Seq
		clear(seen)
		for _, id := range j.TaskIDs {
			t := l.Task(id)
			if t == nil {
				return 0, fmt.Errorf("job %s lists task %s, which the snapshot lacks", j.ID, id)
			}
			if t.JobID != j.ID {
				return 0, fmt.Errorf("job %s lists task %s of job %s", j.ID, id, t.JobID)
			}
			if _, dup := seen[id]; dup {
				return 0, fmt.Errorf("job %s lists task %s twice", j.ID, id)
			}
			seen[id] = struct{}{}
		}
		listed += len(j.TaskIDs)
	}
	return listed, nil
}

// checkTasks checks each task's state, that its job lists it (looked up
// only when allListed says some task is not), and that a task a worker
// holds has a current attempt under its attempt id, on its worker, which
// exists.
func (snap *Image) checkTasks(l Loaded, allListed bool) error {
	for _, t := range snap.Tasks {
		if !allListed && !slices.Contains(l.Job(t.JobID).TaskIDs, t.ID) {
			return fmt.Errorf("task %s of job %s, which does not list it", t.ID, t.JobID)
		}
		if !slices.Contains(taskStates, t.State) {
			return fmt.Errorf("task %s is in unknown state %q", t.ID, t.State)
		}
		if t.Seq > snap.Seq {
			return fmt.Errorf("task %s has sequence %d, past the store's %d", t.ID, t.Seq, snap.Seq)
		}
		if !t.Active() {
			continue
		}
		a := t.Current()
		switch {
		case a == nil:
			return fmt.Errorf("task %s is %s with no attempt", t.ID, t.State)
		case t.AttemptID == "" || a.ID != t.AttemptID:
			return fmt.Errorf("task %s is %s under attempt %q, its last attempt is %q", t.ID, t.State, t.AttemptID, a.ID)
		case t.WorkerID == "" || a.WorkerID != t.WorkerID:
			return fmt.Errorf("task %s is held by worker %q, its attempt by %q", t.ID, t.WorkerID, a.WorkerID)
		case !l.Worker(t.WorkerID):
			return fmt.Errorf("task %s is %s on worker %s, which the snapshot lacks", t.ID, t.State, t.WorkerID)
		}
	}
	return nil
}

// checkIdempotency checks that every idempotency key names a job.
func (snap *Image) checkIdempotency(l Loaded) error {
	for _, k := range slices.Sorted(maps.Keys(snap.Idempotency)) {
		if v := snap.Idempotency[k]; l.Job(v) == nil {
			return fmt.Errorf("idempotency key %q names job %s, which the snapshot lacks", k, v)
		}
	}
	return nil
}
