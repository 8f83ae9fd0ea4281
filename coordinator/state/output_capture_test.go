package state

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// generationOf is a snapshot of a store holding job name's task, with
// one record of output that names the job: the store section and the
// output section.
func generationOf(t *testing.T, name string) (section, output []byte) {
	t.Helper()
	s := New()
	task := name + "-a"
	mustApply(t, s, register("w1", "GPU-1"), submit(name, 1, 0),
		command.AssignTask{TaskID: task, WorkerID: "w1", AttemptID: "att", Now: at(2)},
		command.AppendLogs{TaskID: task, WorkerID: "w1", AttemptID: "att", Stream: "stdout", Seq: 1, Data: name, Now: at(3)})
	c, out, err := s.CaptureWithOutput()
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	var sec, o bytes.Buffer
	if err := c.Encode(&sec); err != nil {
		t.Fatal(err)
	}
	if _, err := out.WriteTo(&o); err != nil {
		t.Fatal(err)
	}
	return sec.Bytes(), o.Bytes()
}

// Captures taken while restores swap the store between two snapshots
// each hold the tables and the output of one and the same snapshot.
func TestCaptureWithOutputDuringRestores(t *testing.T) {
	type gen struct{ section, output []byte }
	var gens [2]gen
	for i, name := range []string{"g0", "g1"} {
		gens[i].section, gens[i].output = generationOf(t, name)
	}
	s := New()
	restore := func(g gen) {
		out, err := s.PrepareOutput(bytes.NewReader(g.output))
		if err != nil {
			t.Error(err)
			return
		}
		if err := s.RestoreWithOutput(bytes.NewReader(g.section), out); err != nil {
			t.Error(err)
		}
	}
	restore(gens[0])
	const rounds = 2000
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			restore(gens[i%2])
		}
	}()
	mixed := 0
	for range rounds {
		c, out, err := s.CaptureWithOutput()
		if err != nil {
			t.Fatal(err)
		}
		var o bytes.Buffer
		_, err = out.WriteTo(&o)
		out.Release()
		if err != nil {
			t.Fatal(err)
		}
		dec := output.NewDecoder(&o)
		for {
			l, err := dec.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.t.Tasks.Get(l.Task) == nil || c.t.Jobs.Get(l.Data) == nil {
				mixed++
			}
		}
	}
	close(stop)
	wg.Wait()
	if mixed > 0 {
		t.Errorf("over %d captures, %d records of output came from a snapshot other than their tables'", rounds, mixed)
	}
}
