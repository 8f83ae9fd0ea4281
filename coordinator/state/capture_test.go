package state

import (
	"bytes"
	"slices"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/snapcodec"
)

// everyKindScenario is the test scenarios one after the other, then a
// gang that meets and one acquire for several: a state with a record of
// every kind a snapshot holds, reached through every kind of change.
func everyKindScenario() []command.Command {
	keyed := submit("jk", 1, 0)
	keyed.Spec.IdempotencyKey = "once"
	return slices.Concat(scenario(), identityScenario(), securityScenario(), []command.Command{
		keyed,
		register("gw1", "GPU-G1"), register("gw2", "GPU-G2"), gangJob("gg", 2),
		command.AssignGang{JobID: "gg", WorkerID: "gw1", RequestID: "rg", Now: at(20), Members: []command.GangMember{
			{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", Devices: []string{"GPU-G1"}},
			{TaskID: "gg-b", WorkerID: "gw2", AttemptID: "gb", Devices: []string{"GPU-G2"}},
		}},
		command.JoinRendezvous{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", Address: "10.0.0.1", Port: 29500, Now: at(21)},
		command.JoinRendezvous{TaskID: "gg-b", WorkerID: "gw2", AttemptID: "gb", Address: "10.0.0.2", Now: at(21)},
		command.StartTask{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", Now: at(21)},
		command.AppendLogs{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", Stream: "stdout", Seq: 1, Data: "one\n", Now: at(21)},
		command.AppendLogs{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", Stream: "stdout", Seq: 2, Data: "two\n", Now: at(21)},
		register("mw"), submit("jm", 3, 0),
		command.AssignTask{TaskID: "jm-a", WorkerID: "mw", AttemptID: "ma", RequestID: "rm", Now: at(22)},
		command.AssignTask{TaskID: "jm-b", WorkerID: "mw", AttemptID: "mb", RequestID: "rm", More: true, Now: at(22)},
		command.AssignTask{TaskID: "jm-c", WorkerID: "mw", AttemptID: "mc", RequestID: "rm", More: true, Now: at(22)},
		command.LoseAttempt{TaskID: "jm-c", AttemptID: "mc", Reason: "lease expired", Now: at(23)},
		// A gang member's failed finish requeues it (attempts left), and
		// the cancel after changes it again: the finish remembers an
		// older record than the table's.
		command.FinishTask{TaskID: "gg-a", WorkerID: "gw1", AttemptID: "ga", SubmissionID: "sg", BodyHash: "bg", ExitCode: 1, Now: at(24)},
		command.CancelJob{JobID: "gg", By: "admin", Now: at(25)},
	})
}

func captureLogs() map[string][]command.Command {
	return map[string][]command.Command{
		"scenario":   scenario(),
		"identity":   identityScenario(),
		"security":   securityScenario(),
		"every kind": everyKindScenario(),
	}
}

func TestEveryKindScenarioFillsEveryTable(t *testing.T) {
	s := New()
	for _, c := range everyKindScenario() {
		s.Apply(c)
	}
	snap := decodeSnapshot(t, snapshotBytes(t, s))
	sizes := map[string]int{
		"credentials": len(snap.Credentials), "workers": len(snap.Workers), "jobs": len(snap.Jobs), "tasks": len(snap.Tasks),
		"submissions": len(snap.Submissions), "finishes": len(snap.Finishes), "idempotency": len(snap.Idempotency), "nodes": len(snap.Nodes),
		"groups": len(snap.Groups), "clusters": len(snap.Clusters), "enrollments": len(snap.Enrollments), "artifacts": len(snap.Artifacts),
		"audit": len(snap.Audit), "refusals": len(snap.AuditRefusals),
	}
	for table, n := range sizes {
		if n == 0 {
			t.Errorf("table %s is empty", table)
		}
	}
	roundTrip(t, s)
}

// A capture is the state at the moment it was taken: whatever is applied
// after it, encoding it yields the bytes a snapshot taken at that moment
// yields. Each log is cut at every point; after the cut the rest of it
// and then every scenario again (mostly refused, some not) are applied.
func TestCaptureIsUnchangedByLaterCommands(t *testing.T) {
	inBothModes(t, testCaptureIsUnchangedByLaterCommands)
}

// inBothModes runs test with checkOwnership, as every test of the package
// runs (each command as if a capture came before it: tables frozen and
// tasks shared at every step), and without it, as production runs (only
// the captures the test takes freeze anything).
func inBothModes(t *testing.T, test func(t *testing.T)) {
	t.Run("checked", test)
	t.Run("production", func(t *testing.T) {
		checkOwnership = false
		t.Cleanup(func() { checkOwnership = true })
		test(t)
	})
}

func testCaptureIsUnchangedByLaterCommands(t *testing.T) {
	for name, log := range captureLogs() {
		t.Run(name, func(t *testing.T) {
			more := slices.Concat(everyKindScenario(), everyKindScenario())
			for cut := range len(log) + 1 {
				s := New()
				for _, c := range log[:cut] {
					s.Apply(c)
				}
				capture := s.Capture()
				want := snapshotBytes(t, s)
				for _, c := range slices.Concat(log[cut:], more) {
					s.Apply(c)
				}
				var got bytes.Buffer
				if err := capture.Encode(&got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("cut at %d: the capture changed after it was taken", cut)
				}
			}
		})
	}
}

// Persist runs on its own goroutine while the FSM goes on applying: the
// capture is encoded while the store applies, without a race (-race) and
// with the bytes of the moment it was taken.
func TestCaptureEncodesWhileApplying(t *testing.T) {
	inBothModes(t, testCaptureEncodesWhileApplying)
}

func testCaptureEncodesWhileApplying(t *testing.T) {
	log := everyKindScenario()
	for _, cut := range []int{len(log) / 3, len(log) / 2, len(log)} {
		s := New()
		for _, c := range log[:cut] {
			s.Apply(c)
		}
		capture := s.Capture()
		want := snapshotBytes(t, s)
		done := make(chan []byte)
		go func() {
			var buf bytes.Buffer
			if err := capture.Encode(&buf); err != nil {
				t.Error(err)
			}
			done <- buf.Bytes()
		}()
		for _, c := range slices.Concat(log[cut:], everyKindScenario()) {
			s.Apply(c)
			_ = snapshotBytes(t, s) // reads, and captures of its own, meanwhile
		}
		if got := <-done; !bytes.Equal(got, want) {
			t.Fatalf("cut at %d: the capture encoded concurrently differs from the state it was taken of", cut)
		}
	}
}

// Snapshots of the older formats still restore, to the same state:
// version 1 (one JSON document, before this codec) and version 2 (whose
// remembered finishes carry their tasks whole; the finish shares the
// table's record again where the task has not changed since).
func TestOlderSnapshotsRestore(t *testing.T) {
	encoders := map[string]func(testing.TB, *Capture) []byte{"version 1": encodeV1, "version 2": encodeV2}
	for version, encode := range encoders {
		for name, log := range captureLogs() {
			t.Run(version+"/"+name, func(t *testing.T) {
				s := New()
				for _, c := range log {
					s.Apply(c)
				}
				old := encode(t, s.Capture())
				r := New()
				if err := r.Restore(bytes.NewReader(old)); err != nil {
					t.Fatal(err)
				}
				now := snapshotBytes(t, s)
				if !bytes.Equal(snapshotBytes(t, r), now) {
					t.Fatalf("a %s snapshot restored to another state", version)
				}
				if version == "version 2" && len(old) <= len(now) && len(decodeSnapshot(t, now).Finishes) > 0 {
					t.Fatal("finish records saved nothing")
				}
			})
		}
	}
}

// RecordSizes accounts for every record of a snapshot by table; a file of
// another version is refused.
func TestRecordSizes(t *testing.T) {
	s := New()
	for _, c := range everyKindScenario() {
		s.Apply(c)
	}
	snap := snapshotBytes(t, s)
	sizes, err := snapcodec.RecordSizes(bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	body := 0
	for _, table := range []string{"meta", "credentials", "workers", "jobs", "tasks", "submissions", "finishes", "idempotency",
		"nodes", "groups", "clusters", "enrollments", "artifacts", "audit", "audit_refusals"} {
		if sizes[table] == 0 {
			t.Errorf("no bytes for %s", table)
		}
		body += sizes[table]
	}
	if len(sizes) != 15 || body >= len(snap) || body < len(snap)*9/10 {
		t.Fatalf("sizes %v (%d bytes) for a snapshot of %d bytes", sizes, body, len(snap))
	}
	if _, err := snapcodec.RecordSizes(bytes.NewReader(encodeV1(t, s.Capture()))); err == nil {
		t.Fatal("a version 1 snapshot was read as records")
	}
}

// Encode changes nothing in a capture: two encodes of one capture at
// once (under -race) write the same bytes.
func TestCaptureEncodesTwiceAtOnce(t *testing.T) {
	s := New()
	for _, c := range everyKindScenario() {
		s.Apply(c)
	}
	capture := s.Capture()
	out := make(chan []byte, 2)
	for range 2 {
		go func() {
			var buf bytes.Buffer
			if err := capture.Encode(&buf); err != nil {
				t.Error(err)
			}
			out <- buf.Bytes()
		}()
	}
	if a, b := <-out, <-out; !bytes.Equal(a, b) || !bytes.Equal(a, snapshotBytes(t, s)) {
		t.Fatal("encodes of one capture differ")
	}
}
