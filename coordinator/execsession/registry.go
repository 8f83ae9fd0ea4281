package execsession

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// Spec is what a session runs, and for whom.
type Spec struct {
	TaskID   string
	WorkerID string
	// Team is the task's job's team; Actor and CredentialID the client
	// that opened it (only that credential may attach).
	Team         string
	Actor        string
	CredentialID string
	Command      []string
	TTY          bool
	Rows, Cols   int
}

// Limits bound the sessions open at once.
type Limits struct {
	PerTask, PerClient int
	// Attach is how long both ends have to attach.
	Attach time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.PerTask <= 0 {
		l.PerTask = api.MaxExecSessionsPerTask
	}
	if l.PerClient <= 0 {
		l.PerClient = api.MaxExecSessionsPerClient
	}
	if l.Attach <= 0 {
		l.Attach = api.ExecAttachSeconds * time.Second
	}
	return l
}

// Registry holds the open sessions.
type Registry struct {
	clock  clock.Clock
	limits Limits

	mu   sync.Mutex
	byID map[string]*Session
}

// New returns an empty registry.
func New(clk clock.Clock, l Limits) *Registry {
	if clk == nil {
		clk = clock.Real{}
	}
	return &Registry{clock: clk, limits: l.withDefaults(), byID: map[string]*Session{}}
}

// Open records a session for spec, within the limits.
func (r *Registry) Open(spec Spec) (*Session, error) {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now)
	task, client := 0, 0
	for _, s := range r.byID {
		if s.TaskID == spec.TaskID {
			task++
		}
		if s.CredentialID == spec.CredentialID {
			client++
		}
	}
	if task >= r.limits.PerTask {
		return nil, ErrTooManyForTask
	}
	if client >= r.limits.PerClient {
		return nil, ErrTooManyForClient
	}
	s := &Session{
		ID: newID(), Spec: spec, Deadline: now.Add(r.limits.Attach), clock: r.clock,
		agent: make(chan Endpoint, 1), picked: make(chan struct{}), done: make(chan struct{}),
	}
	r.byID[s.ID] = s
	return s, nil
}

// Offers lists the sessions waiting for worker's agent to dial.
func (r *Registry) Offers(workerID string) []api.ExecOffer {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now)
	var out []api.ExecOffer
	for _, s := range r.byID {
		if s.WorkerID == workerID && !s.agentIn {
			out = append(out, api.ExecOffer{ID: s.ID, TaskID: s.TaskID, URL: AgentPath(s.ID)})
		}
	}
	return out
}

// ClaimClient hands the session to the client that opened it, once.
func (r *Registry) ClaimClient(id, credentialID string) (*Session, error) {
	return r.claim(id, func(s *Session) bool {
		if s.clientIn || s.CredentialID != credentialID {
			return false
		}
		s.clientIn = true
		return true
	})
}

// ClaimAgent hands the session to the agent of the task's worker, once.
func (r *Registry) ClaimAgent(id, workerID string) (*Session, error) {
	return r.claim(id, func(s *Session) bool {
		if s.agentIn || s.WorkerID != workerID {
			return false
		}
		s.agentIn = true
		return true
	})
}

func (r *Registry) claim(id string, take func(*Session) bool) (*Session, error) {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked(now)
	s, ok := r.byID[id]
	if !ok || !take(s) {
		return nil, ErrUnknown
	}
	return s, nil
}

// Close forgets a session (idempotent) and ends whoever waits on it.
func (r *Registry) Close(s *Session) {
	r.mu.Lock()
	delete(r.byID, s.ID)
	r.mu.Unlock()
	s.end()
}

// Len is how many sessions are open.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byID)
}

// sweepLocked forgets the sessions past their deadline that have not
// both ends yet.
func (r *Registry) sweepLocked(now time.Time) {
	for id, s := range r.byID {
		if !(s.clientIn && s.agentIn) && now.After(s.Deadline) {
			delete(r.byID, id)
			s.end()
		}
	}
}

// AgentPath is where an agent dials for session id.
func AgentPath(id string) string { return "/v1/workers/self/exec/" + id }

// ClientPath is where the client attaches to session id.
func ClientPath(id string) string { return "/v1/exec/" + id }

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Session is one exec session.
type Session struct {
	ID string
	Spec
	Deadline time.Time
	clock    clock.Clock

	// guarded by the registry's mu
	clientIn, agentIn bool

	agent    chan Endpoint // the agent's end, handed over once
	picked   chan struct{} // closed when the client took the agent's end
	done     chan struct{} // closed when the session ended
	doneOnce sync.Once
	pickOnce sync.Once
}

func (s *Session) end() { s.doneOnce.Do(func() { close(s.done) }) }

// Done is closed once the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// AwaitAgent waits, until the deadline, for the agent's end.
func (s *Session) AwaitAgent(ctx context.Context) (Endpoint, error) {
	timer := s.clock.After(s.Deadline.Sub(s.clock.Now()))
	select {
	case ep := <-s.agent:
		s.pickOnce.Do(func() { close(s.picked) })
		return ep, nil
	case <-timer:
		return nil, ErrExpired
	case <-s.done:
		return nil, ErrExpired
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Join hands the agent's end to the client and waits until the session
// ends (the end must stay open until then), or until the deadline if the
// client never takes it.
func (s *Session) Join(ctx context.Context, ep Endpoint) error {
	s.agent <- ep // buffered: one agent per session (ClaimAgent)
	timer := s.clock.After(s.Deadline.Sub(s.clock.Now()))
	select {
	case <-s.picked:
	case <-timer:
		return ErrExpired
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
