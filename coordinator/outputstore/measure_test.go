package outputstore

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state"
)

// TestMeasureOutputMemory appends 1 GiB of output over 1,000 tasks to a
// store kept in this package's file, through the store's Apply (64 KiB
// chunks, 16 to a Batch command, as agents' posts arrive), and reports
// how much the heap and the process's resident memory grew. It is a
// measurement, not a timed test: it runs only with
// GPULAYER_MEASURE_OUTPUT=1 (about 1 GiB of disk), and fails only if the
// heap or the resident set grew by more than the 20 MB.
//
//	GPULAYER_MEASURE_OUTPUT=1 go test -run TestMeasureOutputMemory -v ./coordinator/outputstore/
func TestMeasureOutputMemory(t *testing.T) {
	if os.Getenv("GPULAYER_MEASURE_OUTPUT") != "1" {
		t.Skip("a measurement: set GPULAYER_MEASURE_OUTPUT=1")
	}
	const (
		tasks   = 1000
		perTask = 1 << 20
		chunk   = 64 << 10
		batch   = 16
	)
	out, err := Open(filepath.Join(t.TempDir(), FileName), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := state.NewWithOutput(out)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustApply := func(c command.Command) {
		if r, ok := s.Apply(c).(state.Result); ok && r.Err() != nil {
			t.Fatalf("%T: %v", c, r.Err())
		}
	}
	mustApply(command.RegisterWorker{WorkerID: "w", Credential: command.CredentialRecord{ID: "c", Kind: "worker", Hash: "h"}, Capabilities: []string{"*"}, Executors: []string{"exec"}, Now: now})
	for i := range tasks {
		job, task := fmt.Sprintf("j%04d", i), fmt.Sprintf("t%04d", i)
		mustApply(command.SubmitJob{JobID: job, TaskIDs: []string{task}, Spec: command.JobSpec{Executor: "exec", Config: []byte(`{}`)}, CreatedBy: "admin", Now: now})
		mustApply(command.AssignTask{TaskID: task, WorkerID: "w", AttemptID: "a" + task, Now: now})
	}
	data := strings.Repeat("0123456789abcde\n", chunk/16)
	before, rssBefore := heapInuse(), rss("VmRSS:")
	start := time.Now()
	var entries [][]byte
	for seq := 1; seq <= perTask/chunk; seq++ {
		for i := range tasks {
			task := fmt.Sprintf("t%04d", i)
			e, err := command.Encode(command.AppendLogs{TaskID: task, WorkerID: "w", AttemptID: "a" + task, Stream: "stdout", Seq: int64(seq), Data: data, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if entries = append(entries, e); len(entries) == batch {
				s.Apply(command.Batch{Entries: entries})
				entries = nil
			}
		}
	}
	elapsed := time.Since(start)
	after, rssAfter := heapInuse(), rss("VmRSS:")
	fi, _ := os.Stat(out.path)
	t.Logf("appended %d MiB over %d tasks in %v; heap in use %.1f -> %.1f MiB (+%.1f MiB); RSS %.1f -> %.1f MiB (+%.1f MiB); output file %d MiB",
		tasks*perTask>>20, tasks, elapsed.Round(time.Millisecond), mib(before), mib(after), mib(after)-mib(before), mib(rssBefore), mib(rssAfter), mib(rssAfter)-mib(rssBefore), fi.Size()>>20)
	t.Logf("now: RssAnon %.1f MiB, RssFile %.1f MiB", mib(rss("RssAnon:")), mib(rss("RssFile:")))
	// Reading back a job's output a page at a time, and streaming all of
	// it into a snapshot, leave the resident set where it was too.
	var cursor state.LogCursor
	for {
		p, err := s.LogsPage("j0500", cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		if cursor = p.Next; !p.More {
			break
		}
	}
	c, err := s.CaptureOutput()
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.WriteTo(io.Discard)
	c.Release()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot section of %d MiB streamed; heap in use %.1f MiB; RSS %.1f MiB", n>>20, mib(heapInuse()), mib(rss("VmRSS:")))
	p, err := s.LogsPage("j0500", nil, 0)
	if err != nil || len(p.Lines) == 0 || len(p.Lines)*chunk > state.LogPageBytes {
		t.Errorf("a page of j0500: %d lines, more %v, %v", len(p.Lines), p.More, err)
	}
	if grew := int64(after) - int64(before); grew > 20<<20 {
		t.Errorf("heap grew by %d bytes for 1 GiB of output, over 20 MB", grew)
	}
	if grew := int64(rssAfter) - int64(rssBefore); grew > 20<<20 {
		t.Errorf("resident set grew by %d bytes for 1 GiB of output, over 20 MB", grew)
	}
}

// heapInuse collects garbage, returns freed memory to the system (so that
// the resident set shows what is held, not what the runtime keeps for
// later) and reads the heap in use.
func heapInuse() uint64 {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// rss is a resident-set figure of this process from /proc ("VmRSS:",
// "RssFile:"...; 0 where there is none).
func rss(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
