package state

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/sched/fit"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
	"github.com/gpulayer/gpulayer/sdk/api"
)

var t0 = time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func gpus(uuids ...string) []command.Device {
	out := make([]command.Device, len(uuids))
	for i, u := range uuids {
		out[i] = command.Device{Index: i, UUID: u, Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, Healthy: true}
	}
	return out
}

func register(id string, devs ...string) command.RegisterWorker {
	return command.RegisterWorker{WorkerID: id, Credential: command.CredentialRecord{ID: "cred-" + id, Kind: "worker", Hash: "h-" + id}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Devices: gpus(devs...), Now: at(0)}
}

func submit(id string, count, gpus int) command.SubmitJob {
	ids := make([]string, count)
	for i := range ids {
		ids[i] = id + "-" + string(rune('a'+i))
	}
	spec := command.JobSpec{Executor: "exec", Config: []byte(`{"command":"true"}`), Count: count, MaxAttempts: 2}
	if gpus > 0 {
		spec.Resources = &command.Resources{GPUs: gpus}
	}
	return command.SubmitJob{JobID: id, TaskIDs: ids, Spec: spec, CreatedBy: "admin", Now: at(1)}
}

// scenario is a log touching every command type, including refusals.
func scenario() []command.Command {
	batchA, _ := command.Encode(command.StartTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Now: at(3)})
	batchB, _ := command.Encode(command.AppendLogs{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Stream: "stdout", Seq: 1, Data: "hi\n", Now: at(3)})
	return []command.Command{
		command.ImportBootstrap{Generation: 1, Credentials: []command.CredentialRecord{{ID: "adm", Kind: "client", Name: "admin", Roles: []string{"admin"}, Hash: "x"}}, Now: at(0)},
		register("w1", "GPU-1", "GPU-2"),
		register("w2", "GPU-3"),
		submit("j1", 2, 1),
		command.AssignTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Devices: []string{"GPU-1"}, Now: at(2)},
		command.AssignTask{TaskID: "j1-b", WorkerID: "w1", AttemptID: "a2", Devices: []string{"GPU-1"}, Now: at(2)}, // refused: device busy
		command.AssignTask{TaskID: "j1-b", WorkerID: "w2", AttemptID: "a3", Devices: []string{"GPU-3"}, Now: at(2)},
		command.Batch{Entries: [][]byte{batchA, batchB}},
		command.AppendLogs{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", Stream: "stdout", Seq: 1, Data: "dup\n", Now: at(3)},
		command.LoseAttempt{TaskID: "j1-b", AttemptID: "a3", Reason: "lease expired", Now: at(40)},
		command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "b1", ExitCode: 0, Now: at(41)},
		command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "b1", ExitCode: 0, Now: at(42)},
		command.AssignTask{TaskID: "j1-b", WorkerID: "w1", AttemptID: "a4", Devices: []string{"GPU-2"}, Now: at(43)},
		command.FinishTask{TaskID: "j1-b", WorkerID: "w2", AttemptID: "a3", ExitCode: 0, Now: at(44)}, // stale
		submit("j2", 1, 0),
		command.CancelJob{JobID: "j2", By: "admin", Now: at(45)},
		command.SetWorkerStatus{WorkerID: "w2", Status: api.WorkerOffline, Now: at(46)},
		command.CollectGarbage{Now: at(100), OlderThan: 30 * time.Second, By: "leader"}, // removes j2
		command.ControlWorker{WorkerID: "w1", Action: command.ActionDrain, Deadline: at(60), By: "admin", Now: at(50)},
		command.ExpireDrains{Now: at(61)},                                                                                            // requeues j1-b, assigned to w1 but not started
		command.ControlWorker{WorkerID: "w2", Action: command.ActionDeregister, Self: true, Deadline: at(90), By: "w2", Now: at(62)}, // w2 holds nothing: forgotten
		command.ControlWorker{WorkerID: "w2", Action: command.ActionResume, By: "admin", Now: at(63)},                                // refused: no such worker
		command.ControlWorker{WorkerID: "w1", Action: command.ActionResume, By: "admin", Now: at(64)},
		command.AssignTask{TaskID: "j1-b", WorkerID: "w1", AttemptID: "a5", Devices: []string{"GPU-2"}, Now: at(65)},
		command.RegisterNode{NodeID: "n1", HTTPAddr: "http://127.0.0.1:1"},
	}
}

func snapshotBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Snapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// roundTrip restores a snapshot of s into a fresh store, checks that the
// copy snapshots to the same bytes, and returns the copy and those bytes.
func roundTrip(t *testing.T, s *Store) (*Store, []byte) {
	t.Helper()
	before := snapshotBytes(t, s)
	r := New()
	if err := r.Restore(bytes.NewReader(before)); err != nil {
		t.Fatal(err)
	}
	if after := snapshotBytes(t, r); !bytes.Equal(before, after) {
		t.Fatalf("restore changed state:\n%s\n---\n%s", before, after)
	}
	return r, before
}

func TestReplayIsDeterministic(t *testing.T) {
	assertDeterministicReplay(t, scenario())
}

// assertDeterministicReplay applies log to three fresh stores, each entry
// round-tripped through the wire encoding as Raft does, and checks that
// they end byte-identical.
func assertDeterministicReplay(t *testing.T, log []command.Command) {
	t.Helper()
	var snaps [][]byte
	for range 3 {
		s := New()
		for _, c := range log {
			applyWire(t, s, c)
		}
		snaps = append(snaps, snapshotBytes(t, s))
	}
	for i := 1; i < len(snaps); i++ {
		if !bytes.Equal(snaps[0], snaps[i]) {
			t.Fatalf("replay %d differs from replay 0:\n%s\n---\n%s", i, snaps[0], snaps[i])
		}
	}
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	s := New()
	for _, c := range scenario() {
		s.Apply(c)
	}
	r, _ := roundTrip(t, s)
	// Derived indexes are rebuilt: w1 holds j1-b, so GPU-2 is busy.
	if got := r.ActiveTasks("w1"); len(got) != 1 || got[0].TaskID != "j1-b" {
		t.Fatalf("active tasks of w1 after restore: %+v", got)
	}
	// The submission index survived: the same finish replays.
	res := r.Apply(command.FinishTask{TaskID: "j1-a", WorkerID: "w1", AttemptID: "a1", SubmissionID: "s1", BodyHash: "b1", Now: at(50)}).(Result)
	if _, err := OutcomeOf[Task](res); err != nil {
		t.Fatalf("replayed finish after restore: %+v", res)
	}
}

func TestScenarioOutcomes(t *testing.T) {
	s := New()
	var results []Result
	for _, c := range scenario() {
		if r, ok := s.Apply(c).(Result); ok {
			results = append(results, r)
		} else {
			results = append(results, Result{})
		}
	}
	if !errors.Is(results[5].Err(), ErrConflict) {
		t.Errorf("assigning a busy GPU: %v, want conflict", results[5].Err())
	}
	if !errors.Is(results[13].Err(), ErrStaleAttempt) {
		t.Errorf("late finish of a lost attempt: %v, want stale_attempt", results[13].Err())
	}
	a, _ := s.Task("j1-a")
	if a.State != api.TaskSucceeded || a.ExecutedBy != "w1" || a.SubmittedBy != "w1" {
		t.Errorf("j1-a: %+v", a)
	}
	b, _ := s.Task("j1-b")
	// Its second attempt was preempted by w1's drain and does not count:
	// a third is allowed although the job allows two.
	if b.State != api.TaskAssigned || len(b.Attempts) != 3 || b.Attempts[0].State != api.AttemptLost || b.Attempts[0].WorkerID != "w2" ||
		b.Attempts[1].State != api.AttemptPreempted || b.AttemptID != "a5" {
		t.Errorf("j1-b: %+v", b)
	}
	if _, err := s.Worker("w2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("deregistered w2: %v, want not found", err)
	}
	if !errors.Is(results[len(results)-4].Err(), ErrNotFound) {
		t.Errorf("resuming a forgotten worker: %v, want not found", results[len(results)-4].Err())
	}
	j2, _ := s.Job("j2")
	for _, task := range j2.Tasks {
		if task.State != api.TaskCancelled {
			t.Errorf("j2: task %s is %s", task.ID, task.State)
		}
	}
	page, _ := s.LogsPage("j1", nil, 0)
	if len(page.Lines) != 1 || page.Lines[0].Data != "hi\n" {
		t.Errorf("logs (duplicate seq must be ignored): %+v", page.Lines)
	}
}

func TestClaimDecisions(t *testing.T) {
	s := New()
	s.Apply(register("w1", "GPU-1"))
	s.Apply(register("w2", "GPU-2"))
	s.Apply(submit("j", 2, 0))
	s.Apply(command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att1", Now: at(2)})
	cases := []struct {
		name    string
		task    string
		worker  string
		attempt string
		want    error
	}{
		{"unknown task", "nope", "w1", "att1", ErrNotFound},
		{"other worker", "j-a", "w2", "att1", ErrWrongClaimant},
		{"other worker guessing", "j-a", "w2", "zzz", ErrWrongClaimant},
		{"pending task", "j-b", "w1", "att1", ErrNotClaimed},
		{"unknown attempt", "j-a", "w1", "zzz", ErrStaleAttempt},
		{"empty attempt", "j-a", "w1", "", ErrStaleAttempt},
		{"holder", "j-a", "w1", "att1", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.Apply(command.StartTask{TaskID: c.task, WorkerID: c.worker, AttemptID: c.attempt, Now: at(3)}).(Result)
			if c.want == nil && res.Err() != nil || c.want != nil && !errors.Is(res.Err(), c.want) {
				t.Fatalf("got %v, want %v", res.Err(), c.want)
			}
		})
	}
}

func TestLostAttemptsExhaustRetries(t *testing.T) {
	s := New()
	s.Apply(register("w1"))
	s.Apply(submit("j", 1, 0)) // max_attempts 2
	for i, att := range []string{"x1", "x2"} {
		if r := s.Apply(command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Now: at(i * 10)}).(Result); r.Err() != nil {
			t.Fatal(r.Err())
		}
		s.Apply(command.LoseAttempt{TaskID: "j-a", AttemptID: att, Now: at(i*10 + 5)})
	}
	task, _ := s.Task("j-a")
	if task.State != api.TaskFailed || len(task.Attempts) != 2 {
		t.Fatalf("task after two lost attempts: %+v", task)
	}
	if st := s.Stats(); st.Pending != 0 {
		t.Fatalf("pending queue holds %d", st.Pending)
	}
	// Both lapsed attempts come back late: each is a stale attempt, the
	// last one too, although the task has since failed for want of
	// attempts (not "not claimed": the worker did hold it).
	for _, att := range []string{"x1", "x2"} {
		for name, cmd := range map[string]command.Command{
			"finish": command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, ExitCode: 0, Now: at(30)},
			"fail":   command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Reason: "late", Now: at(30)},
			"start":  command.StartTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Now: at(30)},
		} {
			if r := s.Apply(cmd).(Result); !errors.Is(r.Err(), ErrStaleAttempt) {
				t.Errorf("late %s of lapsed attempt %s: got %v, want stale attempt", name, att, r.Err())
			}
		}
	}
	if after, _ := s.Task("j-a"); after.State != api.TaskFailed || after.ExitCode != nil {
		t.Fatalf("a late finish changed the failed task: %+v", after)
	}
}

func TestMatchOrderAndResources(t *testing.T) {
	s := New()
	s.Apply(register("w1", "GPU-1", "GPU-2"))
	low := submit("low", 1, 0)
	high := submit("high", 1, 2)
	high.Spec.Priority = 5
	big := submit("big", 1, 3)
	big.Spec.Priority = 9
	s.Apply(low)
	s.Apply(high)
	s.Apply(big)
	c, ok, err := s.Match("w1", "", nil)
	if err != nil || !ok || c.TaskID != "high-a" || len(c.Devices) != 2 {
		t.Fatalf("match: %+v %v %v (want high-a with 2 GPUs; big needs 3)", c, ok, err)
	}
	c, ok, _ = s.Match("w1", "", map[string]bool{"high-a": true})
	if !ok || c.TaskID != "low-a" {
		t.Fatalf("match skipping high-a: %+v", c)
	}
	if _, _, err := s.Match("ghost", "", nil); !errors.Is(err, ErrWorkerNotRegistered) {
		t.Fatalf("unknown worker: %v", err)
	}
}

func TestCapabilityRules(t *testing.T) {
	cases := []struct {
		caps         []string
		narrow, want string
		ok           bool
	}{
		{[]string{"*"}, "", "", true},
		{[]string{"*"}, "", "train", true},
		{nil, "", "", false},
		{[]string{}, "", "train", false},
		{[]string{"train"}, "", "train", true},
		{[]string{"train"}, "", "", true},
		{[]string{"train"}, "", "infer", false},
		{[]string{"train"}, "infer", "infer", false},
		{[]string{"*"}, "infer", "", false},
		{[]string{"*"}, "infer", "infer", true},
	}
	for _, c := range cases {
		if got := fit.CapabilityAllows(c.caps, c.narrow, c.want); got != c.ok {
			t.Errorf("caps %v narrow %q task %q: %v, want %v", c.caps, c.narrow, c.want, got, c.ok)
		}
	}
}

// A snapshot that fails to decode or validate leaves the state as it was:
// everything is checked and indexed aside before anything is replaced.
func TestFailedRestoreLeavesStateUntouched(t *testing.T) {
	s := New()
	for _, c := range scenario() {
		s.Apply(c)
	}
	before := snapshotBytes(t, s)
	withVersion := func(v byte) []byte {
		b := bytes.Clone(before)
		b[len(snapcodec.Magic)] = v
		return b
	}
	noJobs := s.Capture()
	noJobs.t.JobOrder = nil
	var orphans bytes.Buffer
	if err := noJobs.Encode(&orphans); err != nil {
		t.Fatal(err)
	}
	job := s.Capture().t.Jobs.Get("j1")
	cases := []struct {
		name string
		snap []byte
	}{
		{"not a snapshot", []byte("\x00\x01garbage")},
		{"wrong magic", append([]byte("GPLSNAQ"), before[len(snapcodec.Magic):]...)},
		{"version 1 header on records", withVersion(1)},
		{"unknown version", withVersion(snapcodec.Version + 1)},
		{"finish record in a version 2 snapshot", func() []byte {
			b := withRecord(t, before, snapcodec.RecFinish, snapcodec.Finish{Task: "j1-a", Submission: "s-new", BodyHash: "b"})
			b[len(snapcodec.Magic)] = 2
			return b
		}()},
		{"task id with a slash", withRecord(t, before, snapcodec.RecTask, &Task{ID: "j1/x", JobID: "j1", State: "pending"})},
		{"finish of a missing task", withRecord(t, before, snapcodec.RecFinish, snapcodec.Finish{Task: "nope", Submission: "s", BodyHash: "b"})},
		{"finish without a task", withRecord(t, before, snapcodec.RecFinish, snapcodec.Finish{Submission: "s", BodyHash: "b"})},
		{"finish listed twice", withRecord(t, withRecord(t, before, snapcodec.RecFinish, snapcodec.Finish{Task: "j1-a", Submission: "s-new", BodyHash: "b"}),
			snapcodec.RecFinish, snapcodec.Finish{Task: "j1-a", Submission: "s-new", BodyHash: "c"})},
		{"JSON of an unknown version", []byte(`{"version":2}`)},
		{"truncated", before[:len(before)/2]},
		{"without its end record", before[:len(before)-1]},
		{"bytes after the end record", append(bytes.Clone(before), 0)},
		{"meta record twice", withRecord(t, before, snapcodec.RecMeta, snapcodec.Meta{Seq: 1})},
		{"unknown record kind", withRecord(t, before, 99, "x")},
		{"record longer than the bound", withRawRecord(t, before, snapcodec.RecNode, snapcodec.MaxRecordBytes+1, nil)},
		{"record longer than what follows", withRawRecord(t, before, snapcodec.RecNode, 1<<20, []byte{0x80})},
		{"record with bytes after its value", withRawRecord(t, before, snapcodec.RecNode, 2, []byte{0x80, 0xc0})},
		{"time claiming 4 GiB", withRawRecord(t, before, snapcodec.RecArtifact, 14, []byte{0x81, 0xab, 'u', 'p', 'l', 'o', 'a', 'd', 'e', 'd', '_', 'a', 't', 0xc9})},
		{"string claiming 4 GiB", withRawRecord(t, before, snapcodec.RecNode, 7, []byte{0x81, 0xa3, 'k', 'e', 'y', 0xdb, 0xff})},
		{"task of a missing job", orphans.Bytes()},
		{"job listed twice", withRecord(t, before, snapcodec.RecJob, job)},
		{"null worker", withRecord(t, before, snapcodec.RecWorker, nil)},
		{"task output, which belongs in the output section", withRecord(t, before, snapcodec.RecLog, map[string]string{"task_id": "x"})},
		{"finish record without its task", withRecord(t, before, snapcodec.RecSubmission, snapcodec.SubmissionRecord{Key: "j1-a/s9", Submission: Submission{BodyHash: "b"}})},
		{"cluster with a bad network", withRecord(t, before, snapcodec.RecCluster, &enroll.Cluster{Key: "lab", CIDRs: []string{"not-a-cidr"}})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Restore(bytes.NewReader(c.snap)); err == nil {
				t.Fatal("a bad snapshot restored")
			}
			if after := snapshotBytes(t, s); !bytes.Equal(before, after) {
				t.Fatalf("a failed restore changed the state:\n%s\n---\n%s", before, after)
			}
			if got := s.ActiveTasks("w1"); len(got) != 1 || got[0].TaskID != "j1-b" {
				t.Fatalf("indexes after a failed restore: %+v", got)
			}
		})
	}
}

// JobEnded says whether a job has ended without copying it; an unknown
// job is not found.
func TestJobEnded(t *testing.T) {
	s := New()
	mustApply(t, s, submit("j", 2, 0))
	if ended, err := s.JobEnded("j"); err != nil || ended {
		t.Fatalf("a pending job: ended %v, %v", ended, err)
	}
	mustApply(t, s, command.CancelJob{JobID: "j", By: "admin", Now: t0})
	if ended, err := s.JobEnded("j"); err != nil || !ended {
		t.Fatalf("a cancelled job: ended %v, %v", ended, err)
	}
	if _, err := s.JobEnded("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown job: %v, want ErrNotFound", err)
	}
}
