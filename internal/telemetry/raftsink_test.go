package telemetry

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	gometrics "github.com/hashicorp/go-metrics/compat"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/gpulayer/gpulayer/internal/telemetry/metricslint"
)

// emit sends one measurement of kind k under key, as Raft would.
func emit(s *raftSink, key []string, k kind, val float32, labels ...gometrics.Label) {
	switch k {
	case kindCounter:
		s.IncrCounterWithLabels(key, val, labels)
	case kindGauge:
		s.SetGaugeWithLabels(key, val, labels)
	default:
		s.AddSampleWithLabels(key, val, labels)
	}
}

// gather serves the sink from a registry of its own and returns the page
// in the text format and its families by name.
func gather(t *testing.T, s *raftSink) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(s); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		if err := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(mf); err != nil {
			t.Fatal(err)
		}
		byName[mf.GetName()] = mf
	}
	return buf.String(), byName
}

// Every key of the table, emitted as Raft emits it (the replication keys
// with their peer_id label, the transport's with rpcType), is served
// under a family that promtool's rules pass.
func TestRaftNamesLintClean(t *testing.T) {
	s := newRaftSink()
	for key, n := range raftNames {
		var labels []gometrics.Label
		switch {
		case strings.HasPrefix(key, "raft.replication."):
			labels = []gometrics.Label{{Name: "peer_id", Value: "c2"}}
		case strings.HasPrefix(key, "raft.net.") && key != "raft.net.getRPCType":
			labels = []gometrics.Label{{Name: "rpcType", Value: "AppendEntries"}}
		}
		emit(s, strings.Split(key, "."), n.kind, 1, labels...)
	}
	page, fams := gather(t, s)
	problems, err := metricslint.Lint(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s", p)
	}
	for key, n := range raftNames {
		if fams[n.name] == nil {
			t.Errorf("%s: no family %s", key, n.name)
		}
	}
	if got := fams["gpulayer_raft_net_rpc_decode_duration_seconds"].GetMetric()[0].GetLabel()[0].GetName(); got != "rpc_type" {
		t.Errorf("rpcType label served as %q, want rpc_type", got)
	}
}

// Keys that share a family agree on its type and help text, and no two
// families differ only by type.
func TestRaftNamesConsistent(t *testing.T) {
	byName := map[string]raftName{}
	for key, n := range raftNames {
		if n.help == "" || n.help == n.name {
			t.Errorf("%s: help %q says nothing", key, n.help)
		}
		if prev, ok := byName[n.name]; ok && (prev.kind != n.kind || prev.help != n.help || prev.label[0] != n.label[0]) {
			t.Errorf("%s: family %s defined twice differently", key, n.name)
		}
		if prev, ok := byName[n.name]; ok && n.label[0] == "" && prev.label[0] == "" {
			t.Errorf("%s: family %s shared by keys with no label to tell them apart", key, n.name)
		}
		byName[n.name] = n
	}
}

// Values are translated: timings from milliseconds to seconds, counters
// accumulated, grouped keys told apart by their label.
func TestRaftSinkValues(t *testing.T) {
	s := newRaftSink()
	s.AddSample([]string{"raft", "commitTime"}, 250)
	s.AddSample([]string{"raft", "commitTime"}, 750)
	s.AddSample([]string{"raft", "fsm", "applyBatchNum"}, 7)
	s.IncrCounter([]string{"raft", "apply"}, 1)
	s.IncrCounter([]string{"raft", "apply"}, 2)
	s.IncrCounter([]string{"raft", "apply"}, -5) // never decreases
	s.IncrCounter([]string{"raft", "state", "candidate"}, 1)
	s.IncrCounter([]string{"raft", "state", "leader"}, 1)
	s.IncrCounter([]string{"raft", "state", "leader"}, 1)
	s.SetGauge([]string{"raft", "peers"}, 3)
	s.SetGauge([]string{"raft", "peers"}, 5)
	s.SetGauge([]string{"raft", "leader", "oldestLogAge"}, 90_000)
	s.AddSampleWithLabels([]string{"raft", "replication", "heartbeat"}, 20, []gometrics.Label{{Name: "peer_id", Value: "c2"}})
	s.EmitKey([]string{"raft", "ignored"}, 1)
	_, fams := gather(t, s)

	commit := fams["gpulayer_raft_commit_duration_seconds"].GetMetric()[0].GetSummary()
	if commit.GetSampleCount() != 2 || math.Abs(commit.GetSampleSum()-1.0) > 1e-9 {
		t.Errorf("commit summary: count %d sum %v, want 2 and 1 (s)", commit.GetSampleCount(), commit.GetSampleSum())
	}
	if sum := fams["gpulayer_raft_fsm_apply_batch_entries"].GetMetric()[0].GetSummary().GetSampleSum(); sum != 7 {
		t.Errorf("batch entries sum %v, want 7 (a count is not scaled)", sum)
	}
	checks := []struct {
		name, label, value string
		want               float64
	}{
		{"gpulayer_raft_apply_total", "", "", 3},
		{"gpulayer_raft_state_changes_total", "state", "candidate", 1},
		{"gpulayer_raft_state_changes_total", "state", "leader", 2},
		{"gpulayer_raft_peers", "", "", 5},
		{"gpulayer_raft_leader_oldest_log_age_seconds", "", "", 90},
	}
	for _, c := range checks {
		if got, ok := seriesValue(fams[c.name], c.label, c.value); !ok || got != c.want {
			t.Errorf("%s{%s=%q} = %v (present %v), want %v", c.name, c.label, c.value, got, ok, c.want)
		}
	}
	hb := fams["gpulayer_raft_replication_heartbeat_duration_seconds"].GetMetric()
	if len(hb) != 1 || hb[0].GetLabel()[0].GetValue() != "c2" || hb[0].GetSummary().GetSampleSum() != 0.02 {
		t.Errorf("heartbeat series %v, want one for peer c2 summing 0.02 s", hb)
	}
	if len(fams) != 7 {
		t.Errorf("%d families served, want 7 (EmitKey serves nothing)", len(fams))
	}
}

// seriesValue is the counter or gauge value of the series of f whose
// label has value (any series when label is empty).
func seriesValue(f *dto.MetricFamily, label, value string) (float64, bool) {
	for _, m := range f.GetMetric() {
		ok := label == ""
		for _, l := range m.GetLabel() {
			ok = ok || (l.GetName() == label && l.GetValue() == value)
		}
		if !ok {
			continue
		}
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue(), true
		}
		return m.GetGauge().GetValue(), true
	}
	return 0, false
}

// A key the table does not know is still served, under a derived name
// that passes the rules; a measurement whose label names differ from its
// family's, or whose type differs from the family of the same name, is
// dropped without breaking the page.
func TestRaftSinkUnknownAndMismatched(t *testing.T) {
	s := newRaftSink()
	s.IncrCounter([]string{"raft", "someNewThing", "RPCCount"}, 2)
	s.AddSample([]string{"raft", "newTimer"}, 5)
	s.SetGauge([]string{"raft", "someNewThing", "RPCCount", "total"}, 1) // same name as the counter's
	s.AddSampleWithLabels([]string{"raft", "replication", "heartbeat"}, 1, []gometrics.Label{{Name: "peer_id", Value: "c2"}})
	s.AddSample([]string{"raft", "replication", "heartbeat"}, 1) // no peer_id: dropped
	s.IncrCounter([]string{"raft", "commitTime"}, 1)             // a counter under a summary's key
	page, fams := gather(t, s)
	problems, err := metricslint.Lint(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s", p)
	}
	if v, ok := seriesValue(fams["gpulayer_raft_some_new_thing_rpc_count_total"], "", ""); !ok || v != 2 || fams["gpulayer_raft_some_new_thing_rpc_count_total"].GetType() != dto.MetricType_COUNTER {
		t.Errorf("unknown counter: %v %v, families %v", v, ok, keys(fams))
	}
	if h := fams["gpulayer_raft_new_timer"].GetHelp(); !strings.Contains(h, `"raft.newTimer"`) || !strings.Contains(h, UntranslatedHelp) {
		t.Errorf("unknown sample's help %q does not name its key", fams["gpulayer_raft_new_timer"].GetHelp())
	}
	if n := len(fams["gpulayer_raft_replication_heartbeat_duration_seconds"].GetMetric()); n != 1 {
		t.Errorf("heartbeat has %d series, want 1", n)
	}
	if _, ok := fams["gpulayer_raft_commit_time_total"]; !ok {
		t.Errorf("a counter under a summary's key is not served apart: %v", keys(fams))
	}
}

func keys(m map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"appendEntries":     "append_entries",
		"getRPCType":        "get_rpc_type",
		"heartbeat_timeout": "heartbeat_timeout",
		"RPCCount":          "rpc_count",
		"numFreePages":      "num_free_pages",
		"peer-id.x":         "peer_id_x",
		"ID":                "id",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// Raft reports from many goroutines while scrapes run: every measurement
// is counted (run under -race, nothing races).
func TestRaftSinkConcurrent(t *testing.T) {
	s := newRaftSink()
	reg := prometheus.NewRegistry()
	if err := reg.Register(s); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			peer := []gometrics.Label{{Name: "peer_id", Value: "c" + strconv.Itoa(w%3)}}
			for range each {
				s.IncrCounter([]string{"raft", "apply"}, 1)
				s.AddSampleWithLabels([]string{"raft", "replication", "heartbeat"}, 2, peer)
				s.SetGauge([]string{"raft", "peers"}, 3)
			}
		}()
	}
	scraped := make(chan struct{})
	go func() {
		defer close(scraped)
		for range 50 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
	<-scraped
	_, fams := gather(t, s)
	if v, _ := seriesValue(fams["gpulayer_raft_apply_total"], "", ""); v != writers*each {
		t.Errorf("gpulayer_raft_apply_total = %v, want %d", v, writers*each)
	}
	var n uint64
	for _, m := range fams["gpulayer_raft_replication_heartbeat_duration_seconds"].GetMetric() {
		n += m.GetSummary().GetSampleCount()
	}
	if n != writers*each {
		t.Errorf("heartbeat samples %d, want %d", n, writers*each)
	}
}
