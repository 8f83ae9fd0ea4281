package telemetry

import (
	"fmt"
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// perPeerPrefixes are the go-metrics keys Raft also emits with the peer's
// id in the metric name (its older form); the same measurements come with
// a peer_id label, so these are dropped to keep names fixed.
var perPeerPrefixes = []string{
	"raft.replication.appendEntries.rpc.",
	"raft.replication.appendEntries.logs.",
	"raft.replication.heartbeat.",
	"raft.replication.installSnapshot.",
}

var (
	sharedOnce sync.Once
	sharedReg  *prometheus.Registry
	sharedErr  error
)

// Shared returns the process-wide registry: Go runtime and process
// collectors, and a sink installed as go-metrics' global that serves what
// Raft reports under well-formed names (raftsink.go, raftnames.go). It
// is built once per process (go-metrics' global is process-wide, and
// several coordinators may run in one process, as in tests and `gpulayer
// dev`): their Raft metrics then add up in one family each. Call it
// before starting Raft.
func Shared() (*prometheus.Registry, error) {
	sharedOnce.Do(func() { sharedReg, sharedErr = newShared() })
	return sharedReg, sharedErr
}

func newShared() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	sink := newRaftSink()
	if err := reg.Register(sink); err != nil {
		return nil, fmt.Errorf("telemetry: Raft metrics: %w", err)
	}
	conf := gometrics.DefaultConfig("")
	conf.EnableHostname = false              // names stay the same on every host
	conf.EnableRuntimeMetrics = false        // the Go collector reports those
	conf.TimerGranularity = time.Millisecond // raftNames scales these to seconds
	conf.BlockedPrefixes = perPeerPrefixes
	if _, err := gometrics.NewGlobal(conf, sink); err != nil {
		return nil, fmt.Errorf("telemetry: go-metrics global: %w", err)
	}
	return reg, nil
}
