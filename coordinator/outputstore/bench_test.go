package outputstore

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/state/output"
)

// benchSection is an output section as a capture writes it: tasks in
// byte order of id, each with perTask records of dataBytes of data. The
// ids are uuid-shaped (36 characters) behind a job prefix, longer than
// the coordinator's own ("j" and 16 hex digits, "-", the index), so
// that the figures err on the slow side.
func benchSection(tb testing.TB, tasks, perTask, dataBytes int) []byte {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, tasks)
	for i := range ids {
		a, b := rng.Uint64(), rng.Uint64()
		ids[i] = fmt.Sprintf("j%08x-%04x-%04x-%04x-%012x-0", uint32(a), uint16(a>>32), uint16(a>>48), uint16(b), b>>16&(1<<48-1))
	}
	slices.Sort(ids)
	data := strings.Repeat("0123456789abcde\n", dataBytes/16+1)[:dataBytes]
	at := time.Date(2026, 12, 4, 12, 0, 0, 123456789, time.UTC)
	var section bytes.Buffer
	enc := output.NewEncoder(&section)
	for _, id := range ids {
		for seq := range perTask {
			r := output.Record{Attempt: 1, Stream: "stdout", Seq: int64(seq + 1), Data: data, Time: at}
			if err := enc.Encode(id, r); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return section.Bytes()
}

// BenchmarkRestore100k restores the output of 100,000 finished tasks of
// one 80-byte line each (the S6 state's output) into a store, and
// captures it again:
//
//	go test -run XXX -bench Restore -benchtime 3x ./coordinator/outputstore/
func BenchmarkRestore100k(b *testing.B) {
	section := benchSection(b, 100_000, 1, 80)
	s, err := Open(filepath.Join(b.TempDir(), FileName), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	restore := func(b *testing.B) {
		prep, err := s.Prepare(bytes.NewReader(section))
		if err != nil {
			b.Fatal(err)
		}
		if err := prep.Commit(); err != nil {
			prep.Discard()
			b.Fatal(err)
		}
	}
	restore(b) // for capture+write, run alone or not
	if n, _ := s.Count(firstTask(b, section)); n != 1 {
		b.Fatalf("restored store counts %d records of its first task, want 1", n)
	}
	b.Run("prepare+commit", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(section)))
		defer reportCPU(b)()
		for b.Loop() {
			restore(b)
		}
	})
	b.Run("capture+write", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(section)))
		var out bytes.Buffer
		defer reportCPU(b)()
		for b.Loop() {
			out.Reset()
			c, err := s.Capture()
			if err != nil {
				b.Fatal(err)
			}
			_, err = c.WriteTo(&out)
			c.Release()
			if err != nil {
				b.Fatal(err)
			}
		}
		if !bytes.Equal(out.Bytes(), section) {
			b.Fatal("the capture differs from the section restored")
		}
	})
}

// firstTask is the task id of a section's first record.
func firstTask(tb testing.TB, section []byte) string {
	tb.Helper()
	l, err := output.NewDecoder(bytes.NewReader(section)).Next()
	if err != nil && err != io.EOF {
		tb.Fatal(err)
	}
	return l.Task
}

// reportCPU, deferred from its call, reports the process's CPU time (user
// and system, all threads: the garbage collector's too) per operation:
// on a machine others share, wall time varies with their load, CPU time
// much less.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDeleteTask removes the output of a task of 100,000 records of
// one 80-byte line each (a day of a line a second), in one write, as the
// job GC does.
func BenchmarkDeleteTask(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), FileName), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := strings.Repeat("0123456789abcde\n", 5)
	ops := make([]output.Op, 1000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for seq := 0; seq < 100_000; seq += len(ops) {
			for i := range ops {
				ops[i] = output.Op{TaskID: "j0123456789abcdef-0", Record: output.Record{Seq: int64(seq + i), Data: data}}
			}
			if err := s.Write(ops); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := s.Write([]output.Op{{TaskID: "j0123456789abcdef-0", Delete: true}}); err != nil {
			b.Fatal(err)
		}
	}
	if n, _ := s.Count("j0123456789abcdef-0"); n != 0 {
		b.Fatalf("the task holds %d records after its delete", n)
	}
}
