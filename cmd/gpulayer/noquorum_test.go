package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/gpulayer/gpulayer/coordinator/coordinatortest"
	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// With no coordinator able to serve it (one answers without a leader,
// two are down), a command fails on stderr with a line saying no leader
// or quorum is reachable, then one line per address with what it said;
// stdout stays empty (issue 27).
func TestClientCommandNamesEveryCoordinatorWithoutQuorum(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"no_leader","message":"coordinator c1 knows no leader: the cluster has no quorum, or is electing a leader; retry"}}`))
	}))
	defer srv.Close()
	down1, down2 := "http://"+coordinatortest.FreeAddr(t), "http://"+coordinatortest.FreeAddr(t)
	r := run(t, []string{"GPULAYER_TOKEN=glc_unused"}, "job", "list", "--addr", strings.Join([]string{down1, srv.URL, down2}, ","))
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	want := []string{
		"gpulayer: ",
		"  " + down1 + ": refused the connection",
		"  " + srv.URL + ": answered 503 no_leader: coordinator c1 knows no leader",
		"  " + down2 + ": refused the connection",
	}
	if r.code != exitFailure || r.stdout != "" || len(lines) != len(want) {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, nothing on stdout, %d lines on stderr", r.code, r.stdout, r.stderr, len(want))
	}
	if !strings.Contains(lines[0], "no coordinator leader or quorum is reachable") || !strings.HasSuffix(lines[0], ":") {
		t.Errorf("first line %q does not say that no leader or quorum is reachable", lines[0])
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d is %q, want it to start with %q", i, lines[i], w)
		}
	}
}

// printError keeps what a command wrapped around the client's error and
// puts each address on a line of its own; other errors stay one line.
func TestPrintErrorListsAddresses(t *testing.T) {
	nq := &client.NoQuorumError{Method: "GET", Path: "/v1/jobs/j1", Tries: []client.AddressError{
		{Addr: "http://c1:7070", Err: &api.Error{Code: api.CodeNoLeader, Message: "no leader", Status: 503}},
		{Addr: "http://c2:7070", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}},
	}}
	var b bytes.Buffer
	printError(&b, fmt.Errorf("job j1: %w", nq))
	want := "gpulayer: job j1: no coordinator leader or quorum is reachable (GET /v1/jobs/j1; tried 2 addresses):\n" +
		"  http://c1:7070: answered 503 no_leader: no leader\n" +
		"  http://c2:7070: refused the connection (nothing listens there)\n"
	if b.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", b.String(), want)
	}
	// An address refused for another reason (a certificate) is not
	// called a missing quorum.
	b.Reset()
	printError(&b, &client.NoQuorumError{Method: "GET", Path: "/v1/jobs", Tries: []client.AddressError{
		{Addr: "https://c1:7070", Err: errors.New("tls: failed to verify certificate")},
	}})
	if want := "gpulayer: no coordinator could serve the request (GET /v1/jobs; tried 1 address):\n  https://c1:7070: tls: failed to verify certificate\n"; b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
	b.Reset()
	printError(&b, errors.New("plain"))
	if b.String() != "gpulayer: plain\n" {
		t.Errorf("printed %q, want one line", b.String())
	}
}
