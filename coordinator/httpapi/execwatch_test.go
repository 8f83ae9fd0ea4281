package httpapi

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/execsession"
	"github.com/gpulayer/gpulayer/coordinator/state"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/internal/testenv"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// frameSink is a client end that keeps what is written to it.
type frameSink struct {
	mu     sync.Mutex
	frames []api.ExecFrame
}

func (f *frameSink) Read(ctx context.Context) (api.ExecFrame, error) {
	<-ctx.Done()
	return api.ExecFrame{}, ctx.Err()
}

func (f *frameSink) Write(_ context.Context, fr api.ExecFrame) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frames = append(f.frames, fr)
	return nil
}

func (f *frameSink) last() (api.ExecFrame, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.frames) == 0 {
		return api.ExecFrame{}, false
	}
	return f.frames[len(f.frames)-1], true
}

// The watch over a running exec session ends it, telling the client why,
// once the opener's token is revoked or has expired, or once the session
// has run 24 hours; while the token stands and the time has not run out,
// the session goes on.
func TestExecWatchEndsTheSession(t *testing.T) {
	start := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		expires time.Duration // 0: no expiry
		revoke  bool
		advance time.Duration
		want    error
		code    api.Code
	}{
		{"token stands", 0, false, time.Hour, nil, ""},
		{"token revoked", 0, true, execCredentialPoll, errExecCredentialGone, api.CodeUnauthenticated},
		{"token expired", time.Minute, false, time.Minute, errExecCredentialGone, api.CodeUnauthenticated},
		{"ran 24 hours", 0, false, execMaxSession, errExecTooLong, api.CodeConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := clock.NewFake(start)
			st := state.New()
			rec := command.CredentialRecord{ID: "c1", Kind: "client", Name: "alice", Hash: "h", Roles: []string{"submit"}, CreatedAt: start}
			if c.expires > 0 {
				rec.ExpiresAt = start.Add(c.expires)
			}
			if r := st.Apply(command.CreateToken{Credential: rec, Now: start}).(state.Result); r.Err() != nil {
				t.Fatal(r.Err())
			}
			s := &Server{clock: fake, store: st}
			sink := &frameSink{}
			ctx, why, stop := s.watchExec(t.Context(), &execsession.Session{Spec: execsession.Spec{CredentialID: "c1"}}, sink)
			defer stop()
			testenv.WaitFor(t, 5*time.Second, func() string { return "the watch's ticker" }, func() bool { return fake.Waiters() > 0 })
			if c.revoke {
				if r := st.Apply(command.RevokeToken{TokenID: "c1", By: "admin", Now: start}).(state.Result); r.Err() != nil {
					t.Fatal(r.Err())
				}
			}
			fake.Advance(c.advance)
			if c.want == nil {
				fake.Advance(execCredentialPoll) // another check, still standing
				testenv.WaitFor(t, 5*time.Second, func() string { return "the ticker to be read" }, func() bool { return fake.Waiters() > 0 })
				if ctx.Err() != nil || why() != nil {
					t.Fatalf("session ended: %v %v", ctx.Err(), why())
				}
				return
			}
			<-ctx.Done()
			if !errors.Is(why(), c.want) {
				t.Fatalf("ended by %v, want %v", why(), c.want)
			}
			if f, ok := sink.last(); !ok || f.Type != api.ExecError || f.ErrorCode != string(c.code) {
				t.Fatalf("the client was told %+v, want an error frame %s", f, c.code)
			}
		})
	}
}
