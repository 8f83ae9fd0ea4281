package outputstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// gateWriter passes its first write through, then tells started and
// holds every later write until open is closed.
type gateWriter struct {
	w       io.Writer
	started chan struct{}
	open    chan struct{}
	once    sync.Once
	first   bool
}

func (g *gateWriter) Write(p []byte) (int, error) {
	if g.first {
		g.once.Do(func() { close(g.started) })
		<-g.open
	}
	g.first = true
	return g.w.Write(p)
}

// within fails the test unless done is closed before the deadline: what
// it guards would otherwise block for ever.
func within(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s blocked", what)
	}
}

// A restore commits while a capture streams a snapshot from the file it
// replaces: the commit does not wait for the capture, the store reads and
// writes the new file meanwhile, and the capture streams the old
// contents to its end (past trims of the old file's mapping) and closes
// the old file when released.
func TestRestoreDuringCapture(t *testing.T) {
	s := openTemp(t)
	data := strings.Repeat("o", 64<<10)
	for i := range 100 { // 6.25 MiB: the capture trims as it streams
		if err := s.Write([]output.Op{{TaskID: "old", Record: output.Record{Seq: int64(i + 1), Data: data}}}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	var section bytes.Buffer
	gate := &gateWriter{w: &section, started: make(chan struct{}), open: make(chan struct{})}
	// Registered after openTemp's Close, so it runs before it: a test that
	// fails with the capture held at the gate lets it go, and the capture's
	// release, not the test, is what Close then waits for.
	var opened sync.Once
	letGo := func() { opened.Do(func() { close(gate.open) }) }
	t.Cleanup(letGo)
	streamed := make(chan error, 1)
	go func() {
		defer c.Release()
		_, err := c.WriteTo(gate)
		streamed <- err
	}()
	<-gate.started // the capture is part-way through its stream

	var next bytes.Buffer
	enc := output.NewEncoder(&next)
	if err := enc.Encode("new", output.Record{Seq: 1, Data: "restored"}); err != nil {
		t.Fatal(err)
	}
	prep, err := s.Prepare(&next)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	old := s.cur // the file the capture streams from, replaced by the commit
	s.mu.RUnlock()
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		if err := prep.Commit(); err != nil {
			t.Error(err)
		}
	}()
	within(t, committed, "a restore's commit, while a capture streams,")

	if n, err := s.Count("old"); err != nil || n != 0 {
		t.Errorf("after the restore the old task has %d records (%v)", n, err)
	}
	if err := s.Write([]output.Op{{TaskID: "new", Record: output.Record{Seq: 2, Data: "written"}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.Read("new", 0, 1<<20)
	if err != nil || len(recs) != 2 || recs[0].Data != "restored" || recs[1].Data != "written" {
		t.Errorf("after the restore: %+v, %v", recs, err)
	}

	select {
	case <-old.closed:
		t.Fatal("the replaced file closed while a capture streams from it")
	default:
	}
	letGo()
	select {
	case err := <-streamed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the capture, once let go, blocked")
	}
	// The capture's release (after its stream ends) closes the old file.
	within(t, old.closed, "closing the replaced file at the capture's release")
	if old.err != nil {
		t.Errorf("closing the replaced file: %v", old.err)
	}
	dec := output.NewDecoder(&section)
	for i := 0; ; i++ {
		l, err := dec.Next()
		if err == io.EOF {
			if i != 100 {
				t.Errorf("capture streamed %d records, want 100", i)
			}
			break
		}
		if err != nil || l.Task != "old" || l.Seq != int64(i+1) || l.Data != data {
			t.Fatalf("capture record %d: task %s seq %d, %v", i, l.Task, l.Seq, err)
		}
	}
}

// Close waits for the captures open on the file, and the store answers
// ErrClosed from then on; a store opened again at the path starts empty.
// A second Close waits as the first does, and answers the same.
func TestCloseWaitsForCaptures(t *testing.T) {
	for _, closers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d closers", closers), func(t *testing.T) {
			testCloseWaits(t, closers)
		})
	}
}

func testCloseWaits(t *testing.T, closers int) {
	s := openTemp(t)
	if err := s.Write([]output.Op{{TaskID: "t", Record: output.Record{Seq: 1, Data: "x"}}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release) // a failed test must not leave Close waiting
	s.mu.RLock()
	g := s.cur
	s.mu.RUnlock()
	waiting := make(chan struct{}, closers)
	s.closeWaits = func() { waiting <- struct{}{} }
	closed := make(chan error, closers)
	for range closers {
		go func() { closed <- s.Close() }()
	}
	for range closers {
		select {
		case <-waiting:
		case err := <-closed:
			t.Fatalf("Close returned (%v) with a capture open", err)
		case <-time.After(20 * time.Second):
			t.Fatal("Close neither returned nor waited")
		}
	}
	// Every Close now waits: the store's reference is gone, the capture's
	// is the one left.
	s.mu.RLock()
	cur := s.cur
	s.mu.RUnlock()
	g.mu.Lock()
	refs := g.refs
	g.mu.Unlock()
	if cur != nil || refs != 1 {
		t.Fatalf("Close waits with the store's file %p and %d references, want none and 1", cur, refs)
	}
	var section bytes.Buffer
	if _, err := c.WriteTo(&section); err != nil {
		t.Error(err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a capture open", err)
	default:
	}
	c.Release()
	for range closers {
		select {
		case err := <-closed:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Close blocked after the capture's release")
		}
	}
	if _, err := s.Read("t", 0, 1); err != ErrClosed {
		t.Errorf("read after Close: %v, want ErrClosed", err)
	}
	if !strings.Contains(section.String(), `"task":"t"`) {
		t.Errorf("capture streamed %q", section.String())
	}
	again, err := Open(s.path, Options{MmapBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n, _ := again.Count("t"); n != 0 {
		t.Errorf("reopened store holds %d records", n)
	}
}

// A commit whose rename fails leaves the store on its file, and the
// restore is discarded without trace.
func TestCommitFailsBeforeTheSwap(t *testing.T) {
	s := openTemp(t)
	if err := s.Write([]output.Op{{TaskID: "kept", Record: output.Record{Seq: 1, Data: "x"}}}); err != nil {
		t.Fatal(err)
	}
	var next bytes.Buffer
	if err := output.NewEncoder(&next).Encode("new", output.Record{Seq: 1, Data: "y"}); err != nil {
		t.Fatal(err)
	}
	prep, err := s.Prepare(&next)
	if err != nil {
		t.Fatal(err)
	}
	// A directory with an entry where the file was: the rename over it
	// fails (the open file lives on, nameless).
	if err := os.Remove(s.path); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.path, "in-the-way"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := prep.Commit(); err == nil {
		t.Fatal("commit over a directory succeeded")
	}
	prep.Discard()
	if n, _ := s.Count("kept"); n != 1 {
		t.Errorf("after a failed commit the store counts %d records of kept, want 1", n)
	}
	if n, _ := s.Count("new"); n != 0 {
		t.Errorf("after a failed commit the store counts %d records of new", n)
	}
	recs, err := s.Read("kept", 0, 1<<20)
	if err != nil || len(recs) != 1 || recs[0].Data != "x" {
		t.Errorf("after a failed commit: %+v, %v", recs, err)
	}
	if _, err := os.Stat(s.path + ".next"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging file left behind: %v", err)
	}
}
