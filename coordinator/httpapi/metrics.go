package httpapi

import (
	"fmt"
	"net/http"
	"sort"
	"sync"

	"github.com/gpulayer/gpulayer/coordinator/auth"
)

// metrics counts responses by status for the Prometheus endpoint.
type metrics struct {
	mu       sync.Mutex
	byStatus map[int]int64
}

func newMetrics() *metrics { return &metrics{byStatus: map[int]int64{}} }

func (m *metrics) observe(status int) {
	if status == 0 {
		status = http.StatusOK
	}
	m.mu.Lock()
	m.byStatus[status]++
	m.mu.Unlock()
}

func (s *Server) metricsHandler(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	s.metrics.mu.Lock()
	codes := make([]int, 0, len(s.metrics.byStatus))
	for c := range s.metrics.byStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	counts := make([]int64, len(codes))
	for i, c := range codes {
		counts[i] = s.metrics.byStatus[c]
	}
	s.metrics.mu.Unlock()

	st := s.store.Stats()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprintln(w, "# HELP gpulayer_http_responses_total HTTP responses by status code.")
	fmt.Fprintln(w, "# TYPE gpulayer_http_responses_total counter")
	for i, c := range codes {
		fmt.Fprintf(w, "gpulayer_http_responses_total{code=\"%d\"} %d\n", c, counts[i])
	}
	fmt.Fprintln(w, "# HELP gpulayer_tasks Tasks by state.")
	fmt.Fprintln(w, "# TYPE gpulayer_tasks gauge")
	states := make([]string, 0, len(st.TasksByState))
	for k := range st.TasksByState {
		states = append(states, k)
	}
	sort.Strings(states)
	for _, k := range states {
		fmt.Fprintf(w, "gpulayer_tasks{state=%q} %d\n", k, st.TasksByState[k])
	}
	fmt.Fprintln(w, "# HELP gpulayer_workers Registered workers.")
	fmt.Fprintln(w, "# TYPE gpulayer_workers gauge")
	fmt.Fprintf(w, "gpulayer_workers %d\n", st.Workers)
	fmt.Fprintln(w, "# HELP gpulayer_jobs Jobs held in state.")
	fmt.Fprintln(w, "# TYPE gpulayer_jobs gauge")
	fmt.Fprintf(w, "gpulayer_jobs %d\n", st.Jobs)
	isLeader := 0
	if s.cluster.IsLeader() {
		isLeader = 1
	}
	fmt.Fprintln(w, "# HELP gpulayer_is_leader 1 if this coordinator leads the Raft cluster.")
	fmt.Fprintln(w, "# TYPE gpulayer_is_leader gauge")
	fmt.Fprintf(w, "gpulayer_is_leader %d\n", isLeader)
	fmt.Fprintln(w, "# HELP gpulayer_long_polls_open Acquire long polls and log follow streams open on this coordinator.")
	fmt.Fprintln(w, "# TYPE gpulayer_long_polls_open gauge")
	fmt.Fprintf(w, "gpulayer_long_polls_open %d\n", s.polls.total())
	return nil
}
