package telemetry

import (
	"maps"
	"slices"
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
)

// summaryObjectives are the quantiles a Raft timing is served with, over
// the last summaryMaxAge.
var summaryObjectives = map[float64]float64{0.5: 0.05, 0.9: 0.01, 0.99: 0.001}

const summaryMaxAge = 10 * time.Second

// raftSink is a go-metrics sink that serves what Raft reports as
// Prometheus families named by raftNames: snake_case, counters ending in
// _total, timings in seconds, each with its own help text. It is also the
// collector of those families. A family is made at the first measurement
// of one of its keys, with the label names that measurement carries; a
// later measurement with other label names is dropped (Prometheus needs
// one set per family). Nothing expires: a counter that vanished after a
// quiet minute would read as a reset to rate().
type raftSink struct {
	mu   sync.RWMutex
	fams map[string]*raftFamily // by family name
}

// raftFamily is one served family: its type and the client_golang vector
// holding its series.
type raftFamily struct {
	kind kind
	vec  prometheus.Collector
}

var (
	_ gometrics.MetricSink = (*raftSink)(nil)
	_ prometheus.Collector = (*raftSink)(nil)
)

func newRaftSink() *raftSink { return &raftSink{fams: map[string]*raftFamily{}} }

// Describe sends nothing: the families appear as Raft reports them, so
// the registry checks them when gathered (an unchecked collector).
func (s *raftSink) Describe(chan<- *prometheus.Desc) {}

// Collect sends every family's series.
func (s *raftSink) Collect(ch chan<- prometheus.Metric) {
	s.mu.RLock()
	fams := slices.Collect(maps.Values(s.fams))
	s.mu.RUnlock()
	for _, f := range fams {
		f.vec.Collect(ch)
	}
}

func (s *raftSink) SetGauge(key []string, val float32) { s.SetGaugeWithLabels(key, val, nil) }

func (s *raftSink) SetGaugeWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.record(key, kindGauge, float64(val), labels)
}

// EmitKey is go-metrics' key/value event, which Raft does not use and
// Prometheus has no type for: dropped.
func (s *raftSink) EmitKey([]string, float32) {}

func (s *raftSink) IncrCounter(key []string, val float32) { s.IncrCounterWithLabels(key, val, nil) }

func (s *raftSink) IncrCounterWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.record(key, kindCounter, float64(val), labels)
}

func (s *raftSink) AddSample(key []string, val float32) { s.AddSampleWithLabels(key, val, nil) }

func (s *raftSink) AddSampleWithLabels(key []string, val float32, labels []gometrics.Label) {
	s.record(key, kindSummary, float64(val), labels)
}

// record translates one measurement and adds it to its family's series.
func (s *raftSink) record(key []string, k kind, val float64, labels []gometrics.Label) {
	n := translate(key, k)
	if n.scale != 0 {
		val *= n.scale
	}
	values := make(prometheus.Labels, len(labels)+1)
	for _, l := range labels {
		values[snakeCase(l.Name)] = l.Value
	}
	if n.label[0] != "" {
		values[n.label[0]] = n.label[1]
	}
	f := s.family(n, values)
	if f == nil {
		return
	}
	switch v := f.vec.(type) {
	case *prometheus.CounterVec:
		if c, err := v.GetMetricWith(values); err == nil && val >= 0 {
			c.Add(val)
		}
	case *prometheus.GaugeVec:
		if g, err := v.GetMetricWith(values); err == nil {
			g.Set(val)
		}
	case *prometheus.SummaryVec:
		if o, err := v.GetMetricWith(values); err == nil {
			o.Observe(val)
		}
	}
}

// family is n's family, made with the label names of values if it is
// new; nil when a family of that name has another type.
func (s *raftSink) family(n raftName, values prometheus.Labels) *raftFamily {
	s.mu.RLock()
	f, ok := s.fams[n.name]
	s.mu.RUnlock()
	if !ok {
		s.mu.Lock()
		if f, ok = s.fams[n.name]; !ok {
			f = newRaftFamily(n, slices.Sorted(maps.Keys(values)))
			s.fams[n.name] = f
		}
		s.mu.Unlock()
	}
	if f.kind != n.kind {
		return nil
	}
	return f
}

func newRaftFamily(n raftName, labels []string) *raftFamily {
	f := &raftFamily{kind: n.kind}
	switch n.kind {
	case kindCounter:
		f.vec = prometheus.NewCounterVec(prometheus.CounterOpts{Name: n.name, Help: n.help}, labels)
	case kindGauge:
		f.vec = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: n.name, Help: n.help}, labels)
	default:
		f.vec = prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: n.name, Help: n.help, Objectives: summaryObjectives, MaxAge: summaryMaxAge}, labels)
	}
	return f
}
