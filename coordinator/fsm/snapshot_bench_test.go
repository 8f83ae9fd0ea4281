package fsm_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/gpulayer/gpulayer/bench/stategen"
	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/fsm"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// discardSink is a raft.SnapshotSink that counts what it is given.
type discardSink struct{ n int64 }

func (s *discardSink) Write(p []byte) (int, error) { s.n += int64(len(p)); return len(p), nil }
func (s *discardSink) Close() error                { return nil }
func (s *discardSink) Cancel() error               { return nil }
func (s *discardSink) ID() string                  { return "bench" }

var (
	bigOnce  sync.Once
	bigStore *state.Store
	bigErr   error
)

// bigState is S6's state: 100,000 finished one-task jobs (each with a
// line of output and a remembered finish) and 10,000 workers of 8 GPUs.
func bigState(b *testing.B) *state.Store {
	b.Helper()
	bigOnce.Do(func() {
		cfg, _ := json.Marshal(api.ExecConfig{Command: "true"})
		bigStore, bigErr = stategen.Build(stategen.Options{
			NodeID: "c1", NodeURL: "http://127.0.0.1:1", Workers: 10000, Tasks: 100000,
			LogLine: fmt.Sprintf("%079d\n", 0),
			Spec:    command.JobSpec{Name: "bench", Executor: "exec", Config: cfg, Count: 1, IdempotencyKey: "s6"},
			Devices: func(id string) []command.Device {
				out := make([]command.Device, 8)
				for i := range out {
					out[i] = command.Device{Index: i, UUID: fmt.Sprintf("GPU-%s-%08x-0000-0000-0000-%012d", id, i, i),
						Name: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, DriverVersion: "550.54.15", CUDAVersion: "12.4", ComputeCapability: "9.0", Healthy: true}
				}
				return out
			},
		})
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	return bigStore
}

// BenchmarkSnapshot times, on S6's state, the FSM's Snapshot (which the
// FSM goroutine runs, so no write applies meanwhile), Persist (in the
// background, writes go on), their sum, and Restore; it reports the
// snapshot's size. Run: go test -run XXX -bench Snapshot -benchtime 5x
// ./coordinator/fsm/
func BenchmarkSnapshot(b *testing.B) {
	f := fsm.New(bigState(b))
	var data []byte
	b.Run("capture", func(b *testing.B) {
		for b.Loop() {
			s, err := f.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			s.Release()
		}
	})
	b.Run("persist", func(b *testing.B) {
		var sink discardSink
		for b.Loop() {
			b.StopTimer()
			s, err := f.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			sink = discardSink{}
			b.StartTimer()
			if err := s.Persist(&sink); err != nil {
				b.Fatal(err)
			}
			s.Release()
		}
		b.ReportMetric(float64(sink.n), "bytes")
	})
	b.Run("restore", func(b *testing.B) {
		s, err := f.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := s.Persist(&sink{Buffer: &buf}); err != nil {
			b.Fatal(err)
		}
		data = buf.Bytes()
		to := fsm.New(state.New())
		for b.Loop() {
			if err := to.Restore(io.NopCloser(bytes.NewReader(data))); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var _ raft.SnapshotSink = (*discardSink)(nil)
