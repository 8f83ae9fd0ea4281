package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// tracer is the HTTP transport of every client of a schedule: it notes,
// on the record of the operation a request belongs to, each request the
// client sent for it and how that request ended, so that a report shows
// which node answered what (a call is one operation however many times
// the client resends it).
type tracer struct {
	base http.RoundTripper
	rec  *recorder
	book *addrBook
}

// addrBook is what a client's transport knows of the coordinators'
// addresses: each one's node id, for the records, and, for an agent, the
// fault proxy to dial instead. A node added during a schedule (a wiped
// node's replacement) is added to it.
type addrBook struct {
	mu    sync.RWMutex
	names map[string]string // host:port -> node id
	via   map[string]string // host:port -> the proxy's host:port
}

func newAddrBook(names map[string]string) *addrBook {
	b := &addrBook{names: map[string]string{}, via: map[string]string{}}
	for k, v := range names {
		b.names[k] = v
	}
	return b
}

// add names a node's address, and the proxy to dial instead ("": none).
func (b *addrBook) add(addr, name, via string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.names[addr] = name
	if via != "" {
		b.via[addr] = via
	}
}

func (b *addrBook) name(addr string) string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.names[addr]
}

func (b *addrBook) dial(addr string) string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if to, ok := b.via[addr]; ok {
		return to
	}
	return addr
}

type recordKey struct{}

// withRecord marks ctx's requests as made for rec.
func withRecord(ctx context.Context, rec *record) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

// newTracer returns the HTTP client of a schedule's clients. The book's
// via maps a coordinator's address to the one to dial instead (a fault
// proxy in front of it): the client and the records keep the
// coordinator's own address, and a leader named by a not_leader answer is
// reached through its proxy too.
func newTracer(rec *recorder, book *addrBook) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// As sdk/client's own transport: a dead coordinator does not answer a
	// dial, so give up on it soon.
	dial := (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dial(ctx, network, book.dial(addr))
	}
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: &tracer{base: tr, rec: rec, book: book}}
}

// send is one request the client sent for an operation.
type send struct {
	at     int64
	node   string
	status int
	code   api.Code
	msg    string
	err    string
	// ambiguous: the answer does not tell whether the request took
	// effect, yet the client sent it again.
	ambiguous bool
}

func (s send) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%s: ", s.node, ms(s.at))
	switch {
	case s.err != "":
		b.WriteString(s.err)
	case s.code != "":
		fmt.Fprintf(&b, "%d %s (%s)", s.status, s.code, s.msg)
	default:
		fmt.Fprintf(&b, "%d", s.status)
	}
	if s.ambiguous {
		b.WriteString(" [outcome unknown]")
	}
	return b.String()
}

// ambiguousAnswers are the messages of no_leader and not_leader answers
// given after the request may have taken effect: hashicorp/raft's
// ErrLeadershipLost (the entry may still commit under the next leader), a
// forward whose answer from the leader was lost, and a proposal whose wait
// for its commit ended.
var ambiguousAnswers = []string{"leadership lost while committing", "the leader could not be reached", "waiting for commit", "could not write its log", "context deadline exceeded", "context canceled"}

func ambiguous(status int, code api.Code, msg string, err error) bool {
	if err != nil {
		var op *net.OpError
		return !(errors.As(err, &op) && op.Op == "dial")
	}
	switch code {
	case api.CodeNoLeader, api.CodeNotLeader:
		for _, m := range ambiguousAnswers {
			if strings.Contains(msg, m) {
				return true
			}
		}
		return false
	case api.CodeInternal:
		return true
	}
	return status >= 500 && status != http.StatusServiceUnavailable
}

func (t *tracer) RoundTrip(req *http.Request) (*http.Response, error) {
	rec, _ := req.Context().Value(recordKey{}).(*record)
	began := t.rec.now()
	resp, err := t.base.RoundTrip(req)
	if rec == nil {
		return resp, err
	}
	s := send{at: began, node: t.book.name(req.URL.Host)}
	if s.node == "" {
		s.node = req.URL.Host
	}
	switch {
	case err != nil:
		s.err = shorten(err.Error())
	case resp.StatusCode < 300:
		s.status = resp.StatusCode
	default:
		s.status = resp.StatusCode
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		// The client must see what the network did: an answer cut short
		// stays cut short (before, it was handed on whole and empty, and
		// the client took it for an odd but complete answer: seed 70643).
		var rest io.Reader = bytes.NewReader(body)
		if rerr != nil {
			rest = io.MultiReader(rest, failingReader{rerr})
			s.err = shorten("answer cut short: " + rerr.Error())
		}
		resp.Body = io.NopCloser(rest)
		var eb api.ErrorBody
		if json.Unmarshal(body, &eb) == nil && eb.Error != nil {
			s.code, s.msg = eb.Error.Code, shorten(eb.Error.Message)
		}
	}
	if err != nil || resp.StatusCode >= 300 {
		s.ambiguous = ambiguous(s.status, s.code, s.msg, err) || strings.HasPrefix(s.err, "answer cut short")
	}
	t.rec.update(rec, func(r *record) { r.sends = append(r.sends, s) })
	return resp, err
}

// failingReader fails every read with err.
type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

func shorten(s string) string {
	if len(s) > 90 {
		s = s[:90] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// CloseIdleConnections closes the idle connections of the transport under
// the tracer (http.Client.CloseIdleConnections calls it).
func (t *tracer) CloseIdleConnections() {
	if ci, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
