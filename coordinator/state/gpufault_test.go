package state

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/gpuops"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// A GPU failing under a running task ends the attempt lost, naming the
// GPU and the event; no attempt is used up, the task is pending again at
// once, and its retry goes to another GPU, never the failed one. Only
// the first MaxGPUFaultRetries such losses are free. A fault naming a GPU
// the attempt does not hold is refused and changes nothing.
func TestGPUFaultLosesTheAttemptWithoutUsingIt(t *testing.T) {
	if maxGPUFaultRetries != api.MaxGPUFaultRetries {
		t.Fatalf("the state's bound %d is not the contract's %d", maxGPUFaultRetries, api.MaxGPUFaultRetries)
	}
	s := New()
	c := submit("j", 1, 1)
	c.Spec.MaxAttempts = 1
	mustApply(t, s, register("w1", "GPU-1", "GPU-2", "GPU-3", "GPU-4", "GPU-5"), c)
	taken := map[string]bool{}
	for n := 1; n <= maxGPUFaultRetries+1; n++ {
		cand, ok, err := s.Match("w1", "", nil)
		if err != nil || !ok {
			t.Fatalf("round %d: nothing matched: %v", n, err)
		}
		gpu := cand.Devices[0]
		if taken[gpu] {
			t.Fatalf("round %d: the retry went to %s, which failed before", n, gpu)
		}
		taken[gpu] = true
		att := "a" + string(rune('0'+n))
		mustApply(t, s, command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Devices: cand.Devices, Now: at(2)},
			command.StartTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Now: at(3)})
		if n == 1 {
			before := task(t, s, "j-a")
			if err := apply(t, s, command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Reason: "XID 79", GPUFault: "GPU-9", Now: at(4)}).Err(); !errors.Is(err, ErrInvalid) {
				t.Fatalf("a fault of a GPU the attempt lacks: %v, want invalid", err)
			}
			if after := task(t, s, "j-a"); after.State != before.State || len(after.Attempts) != len(before.Attempts) {
				t.Fatal("a refused fault changed the task")
			}
		}
		mustApply(t, s, command.FailTask{TaskID: "j-a", WorkerID: "w1", AttemptID: att, Reason: "XID 79 (fell off the bus)", GPUFault: gpu, Now: at(4)})
		tk := task(t, s, "j-a")
		a := tk.Attempts[len(tk.Attempts)-1]
		if a.State != attemptLost || a.GPUFault != gpu || !strings.Contains(a.Reason, gpu) || !strings.Contains(a.Reason, "XID 79") {
			t.Fatalf("round %d: attempt %+v", n, a)
		}
		if n <= maxGPUFaultRetries {
			if tk.State != taskPending || tk.AttemptsUsed() != 0 {
				t.Fatalf("round %d: task %s with %d attempts used, want pending with none", n, tk.State, tk.AttemptsUsed())
			}
		} else if tk.State != taskFailed {
			t.Fatalf("a fault past the free ones left the task %s, want failed (max attempts 1)", tk.State)
		}
		rec, _ := s.Worker("w1")
		for _, d := range rec.Worker.Devices {
			if d.UUID == gpu && (d.Healthy || d.Health != gpuops.HealthUnhealthy) {
				t.Fatalf("the failed GPU is still offered: %+v", d)
			}
		}
	}
}
