package state

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// A metered attempt's GPU time, from its start to its end, lands in the
// hour buckets it ran through, by team, model and user: two whole GPUs
// for 90 minutes from 13:30 are 30 GPU-minutes twice in the 13:00 hour
// and 60 twice in the 14:00 hour; a MIG 3g.40gb slice of an 80 GB GPU
// counts half its GPU, under the parent's model. An attempt placed
// without metering, and one that never started, count nothing.
func TestMeteredAttemptsCountGPUTime(t *testing.T) {
	s := New()
	start := t0.Add(30 * time.Minute) // 13:30
	job := inTeam(submit("whole", 1, 2), "vision")
	job.CreatedBy = "alice"
	mig := inTeam(migJob("mig", "3g.40gb", 1, 1), "vision")
	mig.CreatedBy = "alice"
	quiet := submit("quiet", 1, 1)
	never := submit("never", 1, 1)
	mustApply(t, s, command.CreateTeam{Name: "vision", Settings: teamSettings(100, 0), Now: at(0)},
		register("w1", "GPU-a", "GPU-b", "GPU-c"), migWorker("w2"), job, mig, quiet, never,
		command.AssignTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a", "GPU-b"}, Metered: true, Now: start},
		command.StartTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Now: start},
		command.AssignTask{TaskID: "mig-a", WorkerID: "w2", AttemptID: "a2", Devices: []string{"MIG-a"}, Metered: true, Now: start},
		command.StartTask{TaskID: "mig-a", WorkerID: "w2", AttemptID: "a2", Now: start},
		command.AssignTask{TaskID: "quiet-a", WorkerID: "w1", AttemptID: "a3", Devices: []string{"GPU-c"}, Now: start},
		command.StartTask{TaskID: "quiet-a", WorkerID: "w1", AttemptID: "a3", Now: start},
		command.AssignTask{TaskID: "never-a", WorkerID: "w2", AttemptID: "a4", Devices: []string{"GPU-0"}, Metered: true, Now: start},
		command.FinishTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Now: start.Add(90 * time.Minute)},
		command.LoseAttempt{TaskID: "mig-a", AttemptID: "a2", Reason: "lease expired", Now: start.Add(10 * time.Minute)},
		command.FinishTask{TaskID: "quiet-a", WorkerID: "w1", AttemptID: "a3", Now: start.Add(time.Hour)},
		command.LoseAttempt{TaskID: "never-a", AttemptID: "a4", Reason: "lease expired", Now: start.Add(time.Hour)},
	)
	min := func(n int64) int64 { return n * 60_000 }
	want := []usage.Row{
		{Key: usage.Key{Start: t0.Unix(), Team: "vision", Model: h100, User: "alice"}, CentiGPUMillis: 200*min(30) + 50*min(10), Attempts: 1},
		{Key: usage.Key{Start: t0.Add(time.Hour).Unix(), Team: "vision", Model: h100, User: "alice"}, CentiGPUMillis: 200 * min(60), Attempts: 1},
	}
	got := s.UsageRows(t0.Add(-time.Hour), t0.Add(3*time.Hour))
	if !equalRows(got, want) {
		t.Fatalf("usage rows:\n got %+v\nwant %+v", got, want)
	}
	totals := s.UsageTotals()
	if len(totals) != 1 || totals[0].CentiGPUMillis != 200*min(90)+50*min(10) {
		t.Fatalf("totals %+v", totals)
	}
	// The jobs' view of a range that cuts the whole-GPU attempt: 14:00 to
	// 14:30 holds 30 of its minutes.
	jobs := s.JobsUsage("vision", t0.Add(time.Hour), t0.Add(90*time.Minute))
	if len(jobs) != 1 || jobs[0].JobID != "whole" || jobs[0].CentiGPUMillis != 200*min(30) || jobs[0].Tasks != 1 {
		t.Fatalf("jobs usage %+v", jobs)
	}
	if other := s.JobsUsage(command.DefaultTeam, t0, t0.Add(5*time.Hour)); len(other) != 0 {
		t.Fatalf("default's unmetered jobs counted: %+v", other)
	}
}

func equalRows(a, b []usage.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A preempted attempt's time counts, and apart as preempted too.
func TestPreemptedTimeIsCountedApart(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-a"), submit("j", 1, 1),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a"}, Metered: true, Now: t0},
		command.StartTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: t0},
		command.ControlWorker{WorkerID: "w1", Action: command.ActionDrain, Deadline: t0, By: "admin", Now: t0.Add(time.Minute)},
		command.ExpireDrains{Now: t0.Add(2 * time.Minute)})
	// The expired drain marked the task to be stopped; its agent's stop
	// ends the attempt.
	if tk, _ := s.Task("j-a"); tk.Active() {
		mustApply(t, s, command.LoseAttempt{TaskID: "j-a", AttemptID: "a1", Reason: "stopped", Now: t0.Add(20 * time.Minute)})
	}
	tk, _ := s.Task("j-a")
	if a := tk.Attempts[0]; a.State != attemptPreempted {
		t.Fatalf("attempt %s, want preempted", a.State)
	}
	rows := s.UsageRows(t0, t0.Add(time.Hour))
	if len(rows) != 1 || rows[0].PreemptCentiMillis != rows[0].CentiGPUMillis || rows[0].CentiGPUMillis <= 0 {
		t.Fatalf("rows %+v", rows)
	}
}

// Garbage collection folds hour rows older than a week into day rows and
// drops rows older than the retention; the totals stay; the table
// survives a snapshot.
func TestUsageFoldsAndExpires(t *testing.T) {
	s := New()
	run := func(task, attempt string, at time.Time) []command.Command {
		return []command.Command{
			command.AssignTask{TaskID: task, WorkerID: "w1", AttemptID: attempt, Devices: []string{"GPU-a"}, Metered: true, Now: at},
			command.StartTask{TaskID: task, WorkerID: "w1", AttemptID: attempt, Now: at},
			command.FinishTask{TaskID: task, WorkerID: "w1", AttemptID: attempt, Now: at.Add(10 * time.Minute)},
		}
	}
	mustApply(t, s, register("w1", "GPU-a"), submit("a", 1, 1), submit("b", 1, 1))
	mustApply(t, s, run("a-a", "a1", t0)...)                  // 13:00
	mustApply(t, s, run("b-a", "b1", t0.Add(2*time.Hour))...) // 15:00, same day
	mustApply(t, s, command.CollectGarbage{Now: t0.Add(8 * 24 * time.Hour), OlderThan: 100 * 24 * time.Hour, By: "leader"})
	rows := s.UsageRows(t0.Add(-24*time.Hour), t0.Add(24*time.Hour))
	if len(rows) != 1 || !rows[0].Key.Day || rows[0].CentiGPUMillis != 2*100*600_000 || rows[0].Attempts != 2 {
		t.Fatalf("after a week: %+v", rows)
	}
	r := restored(t, s)
	if got := r.UsageRows(t0.Add(-24*time.Hour), t0.Add(24*time.Hour)); !equalRows(got, rows) {
		t.Fatalf("restored %+v", got)
	}
	mustApply(t, s, command.CollectGarbage{Now: t0.Add(usage.Retention + 48*time.Hour), OlderThan: 100 * 24 * time.Hour, By: "leader"})
	if rows := s.UsageRows(t0.Add(-24*time.Hour), t0.Add(24*time.Hour)); len(rows) != 0 {
		t.Fatalf("past the retention: %+v", rows)
	}
	if totals := s.UsageTotals(); len(totals) != 1 || totals[0].CentiGPUMillis != 2*100*600_000 {
		t.Fatalf("totals %+v", totals)
	}
}

// The jobs' usage is read from a view detached from the store, so the
// read lock is held only to take it (a million jobs take seconds to
// walk): commands applied after the view is taken do not change what it
// answers, and the next view sees them. Readers that walk while commands
// apply share nothing the commands change (run under -race; the tests
// check every task write against the capture rules, checkOwnership).
func TestJobsUsageReadsADetachedView(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-a", "GPU-b"), submit("j", 1, 1), submit("k", 1, 1),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a"}, Metered: true, Now: t0},
		command.StartTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: t0},
	)
	before := s.jobsAt()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			s.JobsUsage("", t0, t0.Add(time.Hour))
		}
	}()
	mustApply(t, s,
		command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "a1", Now: t0.Add(time.Minute)},
		command.AssignTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-b"}, Metered: true, Now: t0},
		command.StartTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "a2", Now: t0},
		command.FinishTask{TaskID: "k-a", WorkerID: "w1", AttemptID: "a2", Now: t0.Add(2 * time.Minute)},
	)
	<-done
	if got := before.usage("", t0, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a view taken while the attempt ran counts what ended after it: %+v", got)
	}
	got := s.JobsUsage("", t0, t0.Add(time.Hour))
	if len(got) != 2 || got[0].JobID != "k" || got[0].CentiGPUMillis != 100*120_000 || got[1].JobID != "j" || got[1].CentiGPUMillis != 100*60_000 {
		t.Fatalf("jobs usage after the finishes: %+v", got)
	}
}

// A range that cuts the table's hour buckets counts GPU time exactly from
// an attempt's start to its end inside the range, as PROTOCOL.md counts
// it: the 13:30-15:00 attempt of two GPUs holds 2 × 20 GPU-minutes of
// [13:40, 14:00), 2 × 60 of the 14:00 hour whole, and 2 × 15 of
// [14:00, 14:15); a range inside one hour, 13:50-13:55, holds 2 × 5. An
// attempt counts in Attempts only where it ended. A range that misses
// every attempt is empty, and one on the hour edges reads the table.
func TestUsageRangeCutsBucketsExactly(t *testing.T) {
	s := New()
	start := t0.Add(30 * time.Minute) // 13:30
	job := submit("whole", 1, 2)
	job.Now = t0
	mustApply(t, s, register("w1", "GPU-a", "GPU-b"), job,
		command.AssignTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a", "GPU-b"}, Metered: true, Now: start},
		command.StartTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Now: start},
		command.FinishTask{TaskID: "whole-a", WorkerID: "w1", AttemptID: "a1", Now: start.Add(90 * time.Minute)})
	min := func(n int64) int64 { return n * 60_000 }
	sum := func(rows []usage.Row) (ms int64, attempts int) {
		for _, r := range rows {
			ms += r.CentiGPUMillis
			attempts += r.Attempts
		}
		return ms, attempts
	}
	cases := []struct {
		name     string
		from, to time.Time
		ms       int64
		attempts int
	}{
		{"cut at both ends", t0.Add(40 * time.Minute), t0.Add(75 * time.Minute), 200 * min(20+15), 0},
		{"cut at the start, to the end", t0.Add(40 * time.Minute), t0.Add(3 * time.Hour), 200 * min(20+60), 1},
		{"inside one hour", t0.Add(50 * time.Minute), t0.Add(55 * time.Minute), 200 * min(5), 0},
		{"ending where the attempt ended", t0.Add(100 * time.Minute), t0.Add(120 * time.Minute), 200 * min(20), 1}, // its end counts, as in the hour it ended in
		{"on the hour edges", t0, t0.Add(2 * time.Hour), 200 * min(90), 1},
		{"before it started", t0, t0.Add(30 * time.Minute), 0, 0},
		{"after it ended", t0.Add(121 * time.Minute), t0.Add(5 * time.Hour), 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := s.UsageRows(c.from, c.to)
			if ms, n := sum(rows); ms != c.ms || n != c.attempts {
				t.Fatalf("%v GPU-centi-ms and %d attempts, want %v and %d: %+v", ms, n, c.ms, c.attempts, rows)
			}
		})
	}
	// The jobs' view of the same range agrees.
	if jobs := s.JobsUsage("", t0.Add(40*time.Minute), t0.Add(75*time.Minute)); len(jobs) != 1 || jobs[0].CentiGPUMillis != 200*min(35) {
		t.Fatalf("jobs usage %+v", jobs)
	}
}

// A day whose early hours were folded into its day row and whose later
// hours are still hour rows: a range from inside that day keeps the
// later hour rows from the table (not recomputed from retained jobs,
// which may be gone) and counts the day row only when the day starts
// inside the range.
func TestUsageRangeBesideAFoldedDay(t *testing.T) {
	s := New()
	day := t0.Truncate(24 * time.Hour)
	early, late := day.Add(10*time.Hour), day.Add(21*time.Hour)
	mustApply(t, s, register("w1", "GPU-a"), submit("e", 1, 1), submit("l", 1, 1),
		command.AssignTask{TaskID: "e-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-a"}, Metered: true, Now: early},
		command.StartTask{TaskID: "e-a", WorkerID: "w1", AttemptID: "a1", Now: early},
		command.FinishTask{TaskID: "e-a", WorkerID: "w1", AttemptID: "a1", Now: early.Add(time.Hour)},
		command.AssignTask{TaskID: "l-a", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-a"}, Metered: true, Now: late},
		command.StartTask{TaskID: "l-a", WorkerID: "w1", AttemptID: "a2", Now: late},
		command.FinishTask{TaskID: "l-a", WorkerID: "w1", AttemptID: "a2", Now: late.Add(time.Hour)})
	s.usage.Fold(day.Add(20*time.Hour + usage.HourlyFor)) // the 10:00 hour folds, the 21:00 one stays
	var days, hours int
	rows, _ := s.usage.Copies()
	for _, r := range rows {
		if r.Key.Day {
			days++
		} else {
			hours++
		}
	}
	if days != 1 || hours != 1 {
		t.Fatalf("%d day rows and %d hour rows, want one of each", days, hours)
	}
	hour := int64(100 * 3_600_000)
	sum := func(rows []usage.Row) (ms int64) {
		for _, r := range rows {
			ms += r.CentiGPUMillis
		}
		return ms
	}
	if got := sum(s.UsageRows(day.Add(12*time.Hour), day.Add(48*time.Hour))); got != hour {
		t.Fatalf("from inside the day: %d, want the late hour's %d", got, hour)
	}
	if got := sum(s.UsageRows(day, day.Add(48*time.Hour))); got != 2*hour {
		t.Fatalf("from the day's start: %d, want both hours' %d", got, 2*hour)
	}
}
