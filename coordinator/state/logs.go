package state

import "fmt"

// LogLine is one stored chunk of a job's output, with the task it came
// from.
type LogLine struct {
	TaskID    string
	TaskIndex int
	LogRecord
}

// LogCursor is a position in a job's logs: per task, records already read.
type LogCursor map[string]int

// LogPageBytes bounds the output one Logs call returns (at least one
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
func (s *Store) LogsPage(jobID string, from LogCursor, maxBytes int) (LogPage, error) {
	if maxBytes <= 0 {
		maxBytes = LogPageBytes
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	j, ok := s.jobs[jobID]
	if !ok {
		return LogPage{}, fmt.Errorf("job %s: %w", jobID, ErrNotFound)
	}
	page := LogPage{Next: make(LogCursor, len(j.TaskIDs)), Ended: s.jobTerminal(j)}
	budget := maxBytes
	for _, id := range j.TaskIDs {
		t := s.tasks[id]
		start := max(from[id], 0)
		page.Next[id] = start
		n, err := s.output.Count(id)
		if err != nil {
			return LogPage{}, fmt.Errorf("job %s: output: %w", jobID, err)
		}
		if start >= n {
			page.Next[id] = n
			continue
		}
		if budget <= 0 {
			page.More = true
			continue
		}
		recs, err := s.output.Read(id, start, budget)
		if err != nil {
			return LogPage{}, fmt.Errorf("job %s: output: %w", jobID, err)
		}
		took := 0
		for _, r := range recs {
			// The store returns at least one record; the page takes one
			// over the bound only as its first.
			if len(page.Lines) > 0 && len(r.Data) > budget {
				break
			}
			page.Lines = append(page.Lines, LogLine{TaskID: id, TaskIndex: t.Index, LogRecord: r})
			budget -= len(r.Data)
			took++
		}
		page.Next[id] = start + took
		if start+took < n {
			page.More = true
			budget = 0
		}
	}
	return page, nil
}

// Logs returns one page of a job's stored output from position from
// onwards, the next position, and whether the job has ended with all of
// its output read (done). A caller that wants everything calls again
// from the next position until done or until it has caught up.
func (s *Store) Logs(jobID string, from LogCursor) ([]LogLine, LogCursor, bool, error) {
	p, err := s.LogsPage(jobID, from, 0)
	if err != nil {
		return nil, from, false, err
	}
	return p.Lines, p.Next, p.Ended && !p.More, nil
}
