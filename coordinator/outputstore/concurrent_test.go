package outputstore

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// Writes, reads and a snapshot's stream run at once, past several trims
// of the mapping: reads see a prefix of what was written, the capture
// exactly what was there when it was taken.
func TestConcurrentWritesReadsAndCapture(t *testing.T) {
	s := openTemp(t)
	data := strings.Repeat("x", 64<<10)
	write := func(from, to int) {
		for i := from; i < to; i++ {
			if err := s.Write([]output.Op{{TaskID: "t", Record: output.Record{Seq: int64(i + 1), Data: data}}}); err != nil {
				t.Error(err)
				return
			}
		}
	}
	write(0, 100)
	c, err := s.Capture()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); write(100, 300) }() // 12.5 MiB more: trims
	go func() {
		defer wg.Done()
		for range 50 {
			n, err := s.Count("t")
			if err != nil {
				t.Error(err)
				return
			}
			recs, err := s.Read("t", max(n-3, 0), 1<<20)
			if err != nil {
				t.Error(err)
				return
			}
			for i, r := range recs {
				if want := int64(max(n-3, 0) + i + 1); r.Seq != want || r.Data != data {
					t.Errorf("read seq %d, want %d", r.Seq, want)
				}
			}
		}
	}()
	var section bytes.Buffer
	go func() {
		defer wg.Done()
		defer c.Release()
		if _, err := c.WriteTo(&section); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	if n, _ := s.Count("t"); n != 300 {
		t.Errorf("%d records written, want 300", n)
	}
	dec := output.NewDecoder(&section)
	for i := range 101 {
		l, err := dec.Next()
		if i == 100 {
			if err == nil {
				t.Errorf("capture holds more than the 100 records written before it: seq %d", l.Seq)
			}
			break
		}
		if err != nil || l.Seq != int64(i+1) {
			t.Fatalf("capture record %d: seq %d, %v", i, l.Seq, err)
		}
	}
}
