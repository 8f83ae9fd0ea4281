package main

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// transportLog records the transport errors an agent's client saw, which
// the client retries by itself: a retried acquire whose first try was
// served leaves an assignment nobody received.
type transportLog struct {
	mu   sync.Mutex
	errs []string
	n    int
}

func (l *transportLog) add(r *http.Request, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.errs) < 10 {
		l.errs = append(l.errs, fmt.Sprintf("%s %s %s %s: %v", time.Now().UTC().Format(time.StampMilli), r.Method, r.URL.Host, r.URL.Path, err))
	}
}

func (l *transportLog) snapshot() (int, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n, append([]string(nil), l.errs...)
}

type loggingTransport struct {
	base http.RoundTripper
	log  *transportLog
}

func (t loggingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil && r.Context().Err() == nil {
		t.log.add(r, err)
	}
	return resp, err
}

// agentHTTPClient is one agent's own connection pool, configured as
// sdk/client configures its default, with transport errors recorded.
func agentHTTPClient(l *transportLog) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: loggingTransport{base: tr, log: l}}
}
