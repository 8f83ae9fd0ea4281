package state

import (
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// heldOutput is an in-memory output store whose Read, once armed, says
// it has begun and waits to be let go.
type heldOutput struct {
	*output.Mem
	armed   bool
	reading chan struct{}
	letGo   chan struct{}
}

func (h *heldOutput) Read(taskID string, from, maxBytes int) ([]output.Record, error) {
	if h.armed {
		close(h.reading)
		<-h.letGo
	}
	return h.Mem.Read(taskID, from, maxBytes)
}

// A log page reads the output store without the state's lock: an Apply
// goes through while the page's read is under way, and the page still
// holds the output as it stood when it was asked for.
func TestLogsPageReadsOutsideTheLock(t *testing.T) {
	out := &heldOutput{Mem: output.NewMem(), reading: make(chan struct{}), letGo: make(chan struct{})}
	s := NewWithOutput(out)
	mustApply(t, s, register("w1", "GPU-1"), submit("j", 1, 0),
		command.AssignTask{TaskID: "j-a", WorkerID: "w1", AttemptID: "att-a", Now: at(2)},
		appendCmd("j-a", 1, "first\n", 0))
	out.armed = true
	type result struct {
		page LogPage
		err  error
	}
	paged := make(chan result, 1)
	go func() {
		p, err := s.LogsPage("j", nil, 0)
		paged <- result{p, err}
	}()
	<-out.reading
	applied := make(chan any, 1)
	go func() { applied <- s.Apply(appendCmd("j-a", 2, "second\n", 0)) }()
	select {
	case r := <-applied:
		if r, ok := r.(Result); !ok || r.Err() != nil {
			t.Fatalf("append: %v", r)
		}
	case <-time.After(20 * time.Second):
		close(out.letGo)
		t.Fatal("an Apply waited for a log page's read of the output")
	}
	close(out.letGo)
	r := <-paged
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.page.Lines) != 1 || r.page.Lines[0].Data != "first\n" || r.page.Next["j-a"] != 1 || r.page.More {
		t.Errorf("page: %d lines, next %v, more %v; want the one record stored when it was asked for", len(r.page.Lines), r.page.Next, r.page.More)
	}
	out.armed = false
	p, err := s.LogsPage("j", r.page.Next, 0)
	if err != nil || len(p.Lines) != 1 || p.Lines[0].Data != "second\n" || p.Next["j-a"] != 2 {
		t.Errorf("next page: %+v, %v", p, err)
	}
}
