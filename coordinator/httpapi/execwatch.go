package httpapi

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/execsession"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// An exec session is a shell into someone's task, so it lives no longer
// than the right that opened it: the leader checks the opener's
// credential every execCredentialPoll while the session runs, and ends
// the session (the agent then ends the command, as when the client goes)
// once the credential is revoked, rotated or expired, or once the session
// has run for execMaxSession.

const (
	// execCredentialPoll is how often a running session's credential is
	// checked.
	execCredentialPoll = 2 * time.Second
	// execMaxSession is the longest an exec session runs.
	execMaxSession = 24 * time.Hour
)

var (
	errExecCredentialGone = errors.New("the credential that opened the session was revoked or has expired")
	errExecTooLong        = errors.New("the session ran for its longest time, 24 hours")
)

// watchExec returns ctx, cancelled as above once the client was told
// why (an error frame: an endpoint's connection closes when the context
// of its read is cancelled, so the frame goes first); why says what ended
// the session (nil: not the watch), and stop ends the watch.
func (s *Server) watchExec(ctx context.Context, sess *execsession.Session, client execsession.Endpoint) (_ context.Context, why func() error, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var ended atomic.Pointer[error]
	started := s.now()
	tick := s.clock.NewTicker(execCredentialPoll)
	end := func(code api.Code, err error) {
		ended.Store(&err) // before the frame: the client may hang up on reading it
		_ = client.Write(ctx, api.ExecFrame{Type: api.ExecError, ErrorCode: string(code), Message: err.Error()})
		cancel()
	}
	go func() {
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C():
			}
			now := s.now()
			c, ok := s.store.Credential(sess.CredentialID)
			switch {
			case !ok || c.Revoked || c.Expired(now):
				end(api.CodeUnauthenticated, errExecCredentialGone)
				return
			case now.Sub(started) >= execMaxSession:
				end(api.CodeConflict, errExecTooLong)
				return
			}
		}
	}()
	why = func() error {
		if p := ended.Load(); p != nil {
			return *p
		}
		return nil
	}
	return ctx, why, cancel
}
