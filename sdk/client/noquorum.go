package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// DefaultFailFastWait is how long a FailFast call keeps trying once every
// address has failed while some of them answered (no leader, an answer
// that never came): a leader election takes a second or two, so a call
// made during one still gets through, and one made while the cluster has
// no quorum gets its answer in a few seconds.
const DefaultFailFastWait = 3 * time.Second

// DefaultFailFastAnswerTimeout bounds, for a FailFast call, how long one
// try waits for a coordinator's answer once the request is sent (long
// polls add their own wait; streams and artifact transfers are not
// bounded).
const DefaultFailFastAnswerTimeout = 5 * time.Second

// ErrNoQuorum is matched (errors.Is) by a NoQuorumError.
var ErrNoQuorum = errors.New("no coordinator leader or quorum is reachable")

// NoQuorumError is the error of a call that no coordinator could serve:
// every configured address failed it, by refusing or timing out the
// connection, by sending no answer, or by answering that it has no leader.
// It names each address tried with what it said last, and unwraps to
// those errors (so IsCode(err, api.CodeNoLeader) and Unavailable still
// read it).
type NoQuorumError struct {
	Method, Path string
	// Tries lists each address tried: the configured ones in their
	// order, then any leader address a coordinator pointed to.
	Tries []AddressError
}

// AddressError is what one coordinator address said to a call.
type AddressError struct {
	Addr string
	Err  error
}

// Said describes the failure in a few words: "refused the connection",
// "answered 503 no_leader: ...".
func (a AddressError) Said() string { return describe(a.Err) }

// Headline is the error's first line, without the addresses.
func (e *NoQuorumError) Headline() string {
	what := "no coordinator leader or quorum is reachable"
	if !e.unavailableOnly() {
		what = "no coordinator could serve the request"
	}
	n := "1 address"
	if len(e.Tries) != 1 {
		n = strconv.Itoa(len(e.Tries)) + " addresses"
	}
	return fmt.Sprintf("%s (%s %s; tried %s)", what, e.Method, e.Path, n)
}

func (e *NoQuorumError) Error() string {
	parts := make([]string, len(e.Tries))
	for i, t := range e.Tries {
		parts[i] = t.Addr + ": " + t.Said()
	}
	return "client: " + e.Headline() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns each address's error, in the order of Tries.
func (e *NoQuorumError) Unwrap() []error {
	out := make([]error, len(e.Tries))
	for i, t := range e.Tries {
		out[i] = t.Err
	}
	return out
}

// Is matches ErrNoQuorum.
func (e *NoQuorumError) Is(target error) bool { return target == ErrNoQuorum }

// unavailableOnly reports whether every address failed in a way that says
// nothing but "no leader here now": no connection, no answer, no leader.
func (e *NoQuorumError) unavailableOnly() bool {
	for _, t := range e.Tries {
		if !noLeaderSign(t.Err) {
			return false
		}
	}
	return true
}

// noLeaderSign reports an address failure that means the coordinator is
// down, unreachable or without a leader (rather than, say, a certificate
// it was refused over).
func noLeaderSign(err error) bool {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae.Code == api.CodeNoLeader || ae.Code == api.CodeNotLeader
	}
	var ne net.Error
	return isDialError(err) || errors.As(err, &ne) && ne.Timeout() || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// describe says what an address's failure was, in one line.
func describe(err error) string {
	var ae *api.Error
	var na *noAnswerError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case err == nil:
		return "no error"
	case errors.As(err, &ae):
		s := "answered"
		if ae.Status != 0 {
			s += " " + strconv.Itoa(ae.Status)
		}
		s += " " + string(ae.Code)
		if ae.Leader != "" {
			s += " (leader " + ae.Leader + ")"
		}
		if ae.Message != "" {
			s += ": " + oneLine(ae.Message)
		}
		return s
	case errors.As(err, &na):
		return "took the connection but sent no answer within " + na.limit.String()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused the connection (nothing listens there)"
	case errors.As(err, &dns):
		return "could not be resolved: " + oneLine(dns.Error())
	case isDialError(err) && errors.As(err, &ne) && ne.Timeout():
		return "did not take the connection in time"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "closed the connection without a whole answer"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return oneLine(err.Error())
}

// oneLine keeps a coordinator's text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// tries records, for one call, what each address said last.
type tries struct {
	configured []string
	failed     map[string]error
	order      []string // first failure order, for addresses not configured
}

func newTries(configured []string) *tries {
	return &tries{configured: configured, failed: map[string]error{}}
}

func (t *tries) fail(addr string, err error) {
	if _, ok := t.failed[addr]; !ok {
		t.order = append(t.order, addr)
	}
	t.failed[addr] = err
}

// answered forgets an address's failure: it answered, and had a leader
// (a rate_limited answer).
func (t *tries) answered(addr string) { delete(t.failed, addr) }

// all reports whether every configured address has failed.
func (t *tries) all() bool {
	for _, a := range t.configured {
		if _, ok := t.failed[a]; !ok {
			return false
		}
	}
	return true
}

// undialed reports whether every configured address failed its dial:
// nothing listens anywhere, so no wait will help soon.
func (t *tries) undialed() bool {
	for _, a := range t.configured {
		if err, ok := t.failed[a]; !ok || !isDialError(err) {
			return false
		}
	}
	return true
}

func (t *tries) err(method, path string) *NoQuorumError {
	e := &NoQuorumError{Method: method, Path: path}
	seen := map[string]bool{}
	for _, a := range append(append([]string(nil), t.configured...), t.order...) {
		if err, ok := t.failed[a]; ok && !seen[a] {
			seen[a] = true
			e.Tries = append(e.Tries, AddressError{Addr: a, Err: err})
		}
	}
	return e
}

// noAnswerError is a try that got no answer within its limit after the
// request was sent.
type noAnswerError struct{ limit time.Duration }

func (e *noAnswerError) Error() string {
	return "no answer within " + e.limit.String() + " of sending the request"
}

// Timeout and Temporary make it a net.Error (Unavailable).
func (e *noAnswerError) Timeout() bool   { return true }
func (e *noAnswerError) Temporary() bool { return true }

// answerWaitKey carries a call's own wait on top of the answer timeout
// (a long poll), or a negative value for a call not to bound at all (a
// stream, an artifact transfer).
type answerWaitKey struct{}

// withAnswerWait marks ctx's call as one whose answer may take d longer.
func withAnswerWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, answerWaitKey{}, max(d, 0))
}

// withoutAnswerTimeout marks ctx's call as one whose answer may take as
// long as it takes (its own context bounds it).
func withoutAnswerTimeout(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerWaitKey{}, time.Duration(-1))
}

// answerLimit is how long one try of ctx's call waits for its answer once
// its request is sent (0: no limit).
func (c *Client) answerLimit(ctx context.Context, failFast bool) time.Duration {
	limit := c.answerTimeout
	if limit == 0 && failFast {
		limit = DefaultFailFastAnswerTimeout
	}
	if limit <= 0 {
		return 0
	}
	extra, ok := ctx.Value(answerWaitKey{}).(time.Duration)
	if !ok {
		return limit
	}
	if extra < 0 {
		return 0
	}
	return limit + extra
}

// answerWatch cancels a try whose answer has not come within its limit
// of the request being written.
type answerWatch struct {
	limit  time.Duration
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// watchAnswer returns ctx for one try, bounded by limit once the request
// is written (limit 0: not bounded, and a nil watch).
func watchAnswer(ctx context.Context, limit time.Duration) (context.Context, *answerWatch) {
	if limit <= 0 {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := &answerWatch{limit: limit, cancel: cancel}
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: w.wrote}), w
}

func (w *answerWatch) wrote(httptrace.WroteRequestInfo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.timer != nil {
		return
	}
	w.timer = time.AfterFunc(w.limit, func() { w.cancel(&noAnswerError{limit: w.limit}) })
}

// settle ends the watch once the try returned: a try whose limit passed
// fails with a noAnswerError (its answer, if one came just then, is
// dropped); an answer's body releases the try's context when closed.
func (w *answerWatch) settle(resp *http.Response, err error) (*http.Response, error) {
	if w == nil {
		return resp, err
	}
	w.mu.Lock()
	w.done = true
	fired := w.timer != nil && !w.timer.Stop()
	w.mu.Unlock()
	if fired {
		if resp != nil {
			resp.Body.Close()
		}
		w.cancel(nil)
		return nil, &noAnswerError{limit: w.limit}
	}
	if err != nil {
		w.cancel(nil)
		return nil, err
	}
	resp.Body = &releaseBody{ReadCloser: resp.Body, release: func() { w.cancel(nil) }}
	return resp, nil
}

// releaseBody runs release once the body is closed.
type releaseBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
