package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/bench/rawraft"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/translate"
)

// s1EntrySize is the mean encoded size of the four commands one task
// lifecycle proposes (submit, assign, start, finish), with ids and times
// shaped as the coordinator makes them: R1 applies entries of this size.
func s1EntrySize() int {
	now := time.Now().UTC()
	job, task := "j"+strings.Repeat("a", 16), "j"+strings.Repeat("a", 16)+"-0"
	attempt := strings.Repeat("b", 24)
	cmds := []command.Command{
		command.SubmitJob{JobID: job, TaskIDs: []string{task}, Spec: translate.JobSpecFromAPI(execSpec("s1-123456", 0)), CreatedBy: "admin", Now: now},
		command.AssignTask{TaskID: task, WorkerID: "s1-00001", AttemptID: attempt, Now: now},
		command.StartTask{TaskID: task, WorkerID: "s1-00001", AttemptID: attempt, Now: now},
		command.FinishTask{TaskID: task, WorkerID: "s1-00001", AttemptID: attempt, SubmissionID: attempt + "-finish", BodyHash: strings.Repeat("c", 64), Now: now},
	}
	total := 0
	for _, c := range cmds {
		b, err := command.Encode(c)
		if err != nil {
			panic(err)
		}
		total += len(b)
	}
	return total / len(cmds)
}

// runR1 measures raw Raft Apply on three node processes with raft-boltdb,
// at concurrency 1 and 64, and (full runs) 4: the coordinator's batcher
// keeps at most four entries in flight.
func (e *env) runR1(ctx context.Context) error {
	dir, err := e.dir("r1")
	if err != nil {
		return err
	}
	concs := []int{1, 4, 64}
	if e.opts.quick {
		concs = []int{1, 64}
	}
	res, err := rawraft.Measure(ctx, rawraft.Config{
		Exe: e.exe, Args: []string{"__rawraft"}, Dir: dir, Store: "boltdb",
		EntrySize: s1EntrySize(), Concurrency: concs,
		Duration: e.dur(700*time.Millisecond, 5*time.Second), Warmup: e.dur(300*time.Millisecond, time.Second),
		Stderr: e.childLog,
	})
	if err != nil {
		return err
	}
	e.r1 = &res
	e.report.detail("r1", res)
	for _, r := range res.Runs {
		e.report.add(Row{
			Scenario: "R1", Metric: fmt.Sprintf("raw raft Apply, c=%d (raft-boltdb, %d B entries)", r.Concurrency, res.EntrySize),
			Value: fmt.Sprintf("%.0f writes/s; p50 %.2f ms, p99 %.2f ms", r.WritesPerSec, r.Latency.P50MS, r.Latency.P99MS),
		})
		if r.Latency.Errors > 0 {
			e.report.fail("R1: %d Apply errors at c=%d", r.Latency.Errors, r.Concurrency)
		}
	}
	return nil
}

// r1At returns R1's run at concurrency c.
func (e *env) r1At(c int) (rawraft.Run, bool) {
	if e.r1 == nil {
		return rawraft.Run{}, false
	}
	for _, r := range e.r1.Runs {
		if r.Concurrency == c {
			return r, true
		}
	}
	return rawraft.Run{}, false
}
