package fsm

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// jobNamed is a job name whose task name-a runs on w1.
func jobNamed(name string) []command.Command {
	task := name + "-a"
	return []command.Command{
		command.RegisterWorker{WorkerID: "w1", Credential: command.CredentialRecord{ID: "c1", Kind: "worker", Hash: "h"}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: t0},
		command.SubmitJob{JobID: name, TaskIDs: []string{task}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`), Count: 1}, CreatedBy: "admin", Now: t0},
		command.AssignTask{TaskID: task, WorkerID: "w1", AttemptID: "att", Now: t0},
	}
}

// outputOf is a record of job name's output; its data is the job's name,
// so a record read back tells which job it came from.
func outputOf(name string, seq int) command.AppendLogs {
	return command.AppendLogs{TaskID: name + "-a", WorkerID: "w1", AttemptID: "att", Stream: "stdout", Seq: int64(seq), Data: name, Now: t0}
}

// holdsOneJob fails unless f holds exactly one of the jobs names, with
// output of that job only; it returns the job's name.
func holdsOneJob(t *testing.T, f *FSM, names []string) string {
	t.Helper()
	jobs, _ := f.Store().JobsPage(0, 0)
	if len(jobs) != 1 || !slices.Contains(names, jobs[0].Job.Job.ID) {
		var ids []string
		for _, j := range jobs {
			ids = append(ids, j.Job.Job.ID)
		}
		t.Fatalf("holds jobs %v, want one of %v", ids, names)
	}
	name := jobs[0].Job.Job.ID
	for _, other := range names {
		p, err := f.Store().LogsPage(other, nil, 0)
		if other != name {
			if !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("job %s beside %s: page %+v, %v", other, name, p, err)
			}
			continue
		}
		if err != nil || len(p.Lines) == 0 {
			t.Fatalf("job %s: %d lines, %v", name, len(p.Lines), err)
		}
		for _, l := range p.Lines {
			if l.Data != name {
				t.Fatalf("job %s holds output of %s", name, l.Data)
			}
		}
	}
	return name
}

// Snapshots taken while restores swap the state between two snapshots,
// each of another job, as Raft runs them: Apply, Snapshot and Restore one
// after another on one goroutine (Raft's FSM goroutine), Persist on
// another meanwhile, log pages read on a third. Every persisted snapshot
// passes Check and restores to exactly one of the two jobs with its own
// output; a log page never shows one job's output under the other.
func TestSnapshotsDuringRestores(t *testing.T) {
	names := []string{"ja", "jb"}
	var snaps [2][]byte
	for i, name := range names {
		src := New(state.NewWithOutput(output.NewMem()))
		apply(t, src, jobNamed(name)...)
		apply(t, src, outputOf(name, 1))
		snaps[i] = persist(t, src)
	}
	const rounds = 150
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			f := New(state.NewWithOutput(st.open(t)))
			restore := func(snap []byte) {
				if err := f.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
					t.Fatalf("restore: %v", err)
				}
			}
			restore(snaps[0])

			taken := make(chan raft.FSMSnapshot, 2)
			var persisted [][]byte
			stop := make(chan struct{})
			var wg sync.WaitGroup
			// finish ends both goroutines and waits for them, also when the
			// test fails part-way (before the store closes under them).
			var finished sync.Once
			finish := func() { finished.Do(func() { close(taken); close(stop); wg.Wait() }) }
			defer finish()
			wg.Add(2)
			go func() { // Raft's snapshot goroutine
				defer wg.Done()
				for snap := range taken {
					var s sink
					if err := snap.Persist(&s); err != nil {
						t.Error(err)
					}
					snap.Release()
					persisted = append(persisted, s.Bytes())
				}
			}()
			go func() { // a client following a job's output
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					name := names[i%2]
					p, err := f.Store().LogsPage(name, nil, 0)
					if errors.Is(err, state.ErrNotFound) {
						continue
					}
					if err != nil {
						t.Errorf("log page of %s: %v", name, err)
						return
					}
					for _, l := range p.Lines {
						if l.Data != name {
							t.Errorf("log page of %s shows output of %s", name, l.Data)
							return
						}
					}
				}
			}()
			// Raft's FSM goroutine: each round applies output to the job
			// restored last, takes a snapshot and restores the other job.
			for i := range rounds {
				apply(t, f, outputOf(names[i%2], 2))
				snap, err := f.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				taken <- snap
				restore(snaps[(i+1)%2])
			}
			finish()

			check := New(state.NewWithOutput(st.open(t)))
			for i, snap := range persisted {
				if err := Check(bytes.NewReader(snap)); err != nil {
					t.Fatalf("snapshot %d: check: %v", i, err)
				}
				if err := check.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
					t.Fatalf("snapshot %d: restore: %v", i, err)
				}
				if got, want := holdsOneJob(t, check, names), names[i%2]; got != want {
					t.Errorf("snapshot %d holds job %s, want %s", i, got, want)
				}
				if p, _ := check.Store().LogsPage(names[i%2], nil, 0); len(p.Lines) != 2 {
					t.Errorf("snapshot %d: %d lines of output, want 2 (the snapshot's and the one applied)", i, len(p.Lines))
				}
			}
			if len(persisted) != rounds {
				t.Errorf("%d snapshots persisted, want %d", len(persisted), rounds)
			}
		})
	}
}
