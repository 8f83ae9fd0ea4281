package state

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
)

func dg(c string) string { return strings.Repeat(c, 64) }

// artifactFixture is gcFixture plus artifacts: "a" is an input of j0,
// "b" an output of j1's task, "c" an input of the live job, "d" named by
// no job and uploaded at 5 s, "e" named by none and uploaded at 45 s, and
// "f" named by none, uploaded at 5 s and put again at 45 s.
func artifactFixture(t *testing.T) *Store {
	t.Helper()
	s := New()
	mustApply(t, s, register("w1", "GPU-1"))
	for _, c := range []string{"a", "b", "c", "d", "f"} {
		mustApply(t, s, command.RecordArtifact{Digest: dg(c), Size: 1, NodeID: "n1", Holders: []string{"n2"}, Now: at(5)})
	}
	mustApply(t, s, command.RecordArtifact{Digest: dg("e"), Size: 1, NodeID: "n1", Now: at(45)},
		command.RecordArtifact{Digest: dg("f"), Size: 1, Touch: true, Now: at(45)})
	for i, id := range []string{"j0", "j1"} {
		sub := submit(id, 1, 0)
		var arts []command.TaskArtifact
		switch id {
		case "j0":
			sub.Spec.Inputs = []command.ArtifactRef{{SHA256: dg("a")}}
		case "j1":
			sub.Spec.Outputs = []string{"out/*"}
			arts = []command.TaskArtifact{{Path: "out/b", SHA256: dg("b"), Size: 1}}
		}
		task, att, end := id+"-a", "att-"+id, at(10*(i+1))
		mustApply(t, s, sub,
			command.AssignTask{TaskID: task, WorkerID: "w1", AttemptID: att, Now: end.Add(-time.Second)},
			command.FinishTask{TaskID: task, WorkerID: "w1", AttemptID: att, Artifacts: arts, RequireRecorded: true, Now: end})
	}
	live := submit("live", 1, 0)
	live.Spec.Inputs = []command.ArtifactRef{{SHA256: dg("c"), Path: "data/c"}}
	mustApply(t, s, live)
	return s
}

func artifactDigests(s *Store) []string {
	var out []string
	for _, a := range s.ArtifactRecords() {
		out = append(out, a.Digest[:1])
	}
	sort.Strings(out)
	return out
}

func TestCollectGarbageRemovesArtifactsNoJobNames(t *testing.T) {
	cases := []struct {
		name      string
		gc        command.CollectGarbage
		jobs      int
		artifacts int
		more      bool
		left      []string
	}{
		{"entries written before artifacts were collected keep them all",
			command.CollectGarbage{Now: at(100), OlderThan: 0}, 2, 0, false, []string{"a", "b", "c", "d", "e", "f"}},
		{"jobs before 30 s go, with what they named and old unnamed ones; a fresh upload and one put again stay",
			command.CollectGarbage{Now: at(50), OlderThan: 20 * time.Second, Artifacts: true}, 2, 3, false, []string{"c", "e", "f"}},
		{"no job due: only unnamed old artifacts go",
			command.CollectGarbage{Now: at(50), OlderThan: 45 * time.Second, Artifacts: true}, 0, 1, false, []string{"a", "b", "c", "e", "f"}},
		{"a limit leaves the rest for the next round",
			command.CollectGarbage{Now: at(100), OlderThan: 0, Limit: 2, Artifacts: true}, 2, 2, true, []string{"c", "d", "e", "f"}},
		{"an input of a job still pending is kept however old",
			command.CollectGarbage{Now: at(1000), OlderThan: 0, Artifacts: true}, 2, 5, false, []string{"c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := artifactFixture(t)
			out, err := OutcomeOf[GCOutcome](apply(t, s, c.gc))
			if err != nil {
				t.Fatal(err)
			}
			if out.Removed != c.jobs || out.Artifacts != c.artifacts || out.More != c.more {
				t.Fatalf("outcome %+v, want %d jobs, %d artifacts, more %v", out, c.jobs, c.artifacts, c.more)
			}
			if got := artifactDigests(s); !slices.Equal(got, c.left) {
				t.Fatalf("artifacts left %v, want %v", got, c.left)
			}
		})
	}
}

func TestFinishRecordsArtifactsOnlyOnceUploaded(t *testing.T) {
	s := New()
	mustApply(t, s, register("w1", "GPU-1"),
		command.RecordArtifact{Digest: dg("a"), Size: 3, NodeID: "n1", Now: at(1)})
	sub := submit("j", 1, 0)
	sub.Spec.Outputs = []string{"out"}
	mustApply(t, s, sub, command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att", Now: at(2)})
	fin := func(arts ...command.TaskArtifact) command.FinishTask {
		return command.FinishTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att", Artifacts: arts, RequireRecorded: true, Now: at(3)}
	}
	for name, c := range map[string]command.FinishTask{
		"not uploaded":   fin(command.TaskArtifact{Path: "out/x", SHA256: dg("b"), Size: 3}),
		"size different": fin(command.TaskArtifact{Path: "out/a", SHA256: dg("a"), Size: 4}),
	} {
		if _, err := OutcomeOf[Task](apply(t, s, c)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if !s.WorkerMayUpload("w1") || s.WorkerMayUpload("w2") {
		t.Fatal("only the holder of a task with outputs may upload")
	}
	task, err := OutcomeOf[Task](apply(t, s, fin(command.TaskArtifact{Path: "out/a", SHA256: dg("a"), Size: 3})))
	if err != nil || len(task.Artifacts) != 1 || task.Artifacts[0].Path != "out/a" || task.State != taskSucceeded {
		t.Fatalf("finish: %+v %v", task, err)
	}
	if s.WorkerMayUpload("w1") {
		t.Fatal("a worker whose task ended may still upload")
	}
}
