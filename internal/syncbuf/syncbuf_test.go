package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once (run with -race): every write lands whole.
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("ab"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); len(got) != 1600 || strings.Count(got, "ab") != 800 {
		t.Fatalf("%d bytes, %d pairs; want 1600 and 800", len(got), strings.Count(got, "ab"))
	}
}
