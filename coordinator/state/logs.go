package state

import (
	"fmt"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// LogLine is one stored chunk of a job's output, with the task it came
// from.
type LogLine struct {
	TaskID    string
	TaskIndex int
	output.Record
}

// LogCursor is a position in a job's logs: per task, records already read.
type LogCursor map[string]int

// LogPageBytes bounds the output one LogsPage call returns (at least one
// record is returned when there is one), so that reading a large job
// never loads all of its output.
const LogPageBytes = 1 << 20

// LogPage is one page of a job's output.
type LogPage struct {
	Lines []LogLine
	// Next is the cursor after Lines.
	Next LogCursor
	// More: output past Next was already stored when the page was read.
	More bool
	// Ended: the job had ended when the page was read.
	Ended bool
}

// LogsPage returns a job's stored output from position from onwards (per
// the job's task order), within about maxBytes (<= 0: LogPageBytes).
//
// What the page is read against (the job's tasks, their record counts,
// whether the job has ended) is taken under the read lock; the records
// are read from the output store after it is released, so a large page
// does not hold up Apply. The page covers the output as it stood then:
// records stored since are left for the next page, and a task whose
// output was dropped meanwhile (a restore, a collection) gives fewer
// records, Next moving on only over those returned.
func (s *Store) LogsPage(jobID string, from LogCursor, maxBytes int) (LogPage, error) {
	if maxBytes <= 0 {
		maxBytes = LogPageBytes
	}
	tasks, ended, err := s.logTasks(jobID)
	if err != nil {
		return LogPage{}, err
	}
	page := LogPage{Next: make(LogCursor, len(tasks)), Ended: ended}
	budget := maxBytes
	for _, t := range tasks {
		start := max(from[t.id], 0)
		page.Next[t.id] = start
		if start >= t.count {
			page.Next[t.id] = t.count
			continue
		}
		if budget <= 0 {
			page.More = true
			continue
		}
		recs, err := s.output.Read(t.id, start, budget)
		if err != nil {
			return LogPage{}, fmt.Errorf("job %s: output: %w", jobID, err)
		}
		took := 0
		for _, r := range recs[:min(len(recs), t.count-start)] {
			// The store's page starts this task's; the job's page may
			// already hold other tasks' records.
			if !output.PageTakes(len(page.Lines), maxBytes-budget, len(r.Data), maxBytes) {
				break
			}
			page.Lines = append(page.Lines, LogLine{TaskID: t.id, TaskIndex: t.index, Record: r})
			budget -= len(r.Data)
			took++
		}
		page.Next[t.id] = start + took
		if start+took < t.count {
			page.More = true
			budget = 0
		}
	}
	return page, nil
}

// logTask is what a log page needs of one of the job's tasks.
type logTask struct {
	id    string
	index int
	count int // records stored
}

// logTasks copies, under the read lock, what a log page of the job is
// read against: its tasks in order with their record counts, and whether
// it has ended.
func (s *Store) logTasks(jobID string) ([]logTask, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs.Lookup(jobID)
	if !ok {
		return nil, false, fmt.Errorf("job %s: %w", jobID, ErrNotFound)
	}
	tasks := make([]logTask, 0, len(j.TaskIDs))
	for _, id := range j.TaskIDs {
		n, err := s.output.Count(id)
		if err != nil {
			return nil, false, fmt.Errorf("job %s: output: %w", jobID, err)
		}
		tasks = append(tasks, logTask{id: id, index: s.tasks.Get(id).Index, count: n})
	}
	return tasks, s.jobTerminal(j), nil
}
