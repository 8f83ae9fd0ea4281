package state

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/artifacts"
	"github.com/gpulayer/gpulayer/coordinator/state/audit"
	"github.com/gpulayer/gpulayer/coordinator/state/cow"
	"github.com/gpulayer/gpulayer/coordinator/state/creds"
	"github.com/gpulayer/gpulayer/coordinator/state/deps"
	"github.com/gpulayer/gpulayer/coordinator/state/derived"
	"github.com/gpulayer/gpulayer/coordinator/state/enroll"
	"github.com/gpulayer/gpulayer/coordinator/state/groups"
	"github.com/gpulayer/gpulayer/coordinator/state/output"
	"github.com/gpulayer/gpulayer/coordinator/state/pending"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
	"github.com/gpulayer/gpulayer/coordinator/state/usage"
)

// Store holds the replicated state. Apply is called by one goroutine (the
// FSM); reads may come from any goroutine and take the read lock.
type Store struct {
	mu sync.RWMutex
	tables

	// gen is the capture generation: each Capture moves it on, and a
	// task last written in an older one may be shared with a capture, so
	// is copied before it is changed (ownTask).
	gen atomic.Uint64

	// notify channels are closed and replaced to wake waiters.
	pendingCh chan struct{}
	changedCh chan struct{}
	pendingUp bool

	// output holds the task output; outOps the changes the Apply under
	// way makes to it, written in one Write as the Apply ends
	// (output_apply.go).
	output output.Store
	outOps []output.Op

	// applyMu is held by Apply and RestoreWithOutput throughout, each
	// taking mu inside it, and by CaptureWithOutput: the commands that
	// change the state and the output one at a time.
	applyMu sync.Mutex

	// version moves on with every applied command or restore.
	version uint64
	// derived keeps what placement reads that is derived from the tables
	// (each worker's view, the hold's bases, the hold and the team order
	// of one version; package derived, dropped by workerview.go).
	derived derived.Cache

	// touched lists the jobs whose tasks the command being applied
	// changed, for deps.Index.Settle (dependencies.go).
	touched []string
}

// tables is the replicated state and the indexes derived from it: what a
// snapshot restores, swapped in whole so that a restore that fails leaves
// the previous state as it was.
type tables struct {
	bootstrapGeneration int
	credentials         *creds.Table
	workers             map[string]*Worker
	jobs                *cow.Map[*Job]
	jobOrder            []string
	tasks               *cow.Map[*Task]
	// outputBytes is the sum of the tasks' LogBytes: the output the
	// total bound counts (derived, rebuilt at restore).
	outputBytes int
	submissions *cow.Map[*Submission]
	idempotency *cow.Map[string]
	nodes       map[string]string
	groups      *groups.Table
	teams       *teams.Table
	// usage is the GPU accounting ledger (usage.go, package usage).
	usage *usage.Ledger
	// allowlist is the enrollment clusters and rows (package enroll).
	allowlist *enroll.Table
	artifacts *artifacts.Table
	// audit is the audit log (package audit).
	audit audit.Log
	seq   uint64

	// openJobs indexes, per client name, jobs that may not have ended
	// (quota.go); nil until first needed.
	openJobs map[string]map[string]struct{}

	// topo numbers the workers' topology label values
	// (gangtopology_index.go; derived, rebuilt at restore).
	topo *topoNames

	queue *pending.Queue

	// inuse counts the GPUs each team's active tasks hold (teamroom.go).
	inuse *teamLoad

	// deps indexes the jobs that wait for others (dependencies.go).
	deps *deps.Index
}

// New returns an empty store keeping task output in memory.
func New() *Store { return NewWithOutput(output.NewMem()) }

// NewWithOutput returns an empty store keeping task output in out, which
// must be empty.
func NewWithOutput(out output.Store) *Store {
	s := &Store{output: out}
	s.reset()
	s.pendingCh = make(chan struct{})
	s.changedCh = make(chan struct{})
	return s
}

func (s *Store) reset() {
	s.bootstrapGeneration = 0
	s.credentials = creds.New()
	s.workers = map[string]*Worker{}
	s.topo = newTopoNames()
	s.jobs = cow.New[*Job]()
	s.jobOrder = nil
	s.tasks = cow.New[*Task]()
	s.outputBytes = 0
	s.submissions = cow.New[*Submission]()
	s.idempotency = cow.New[string]()
	s.nodes = map[string]string{}
	s.groups = groups.New()
	s.teams = teams.New()
	s.usage = usage.New()
	s.allowlist = enroll.New()
	s.artifacts = artifacts.New()
	s.audit = audit.Log{}
	s.openJobs = nil
	s.seq = 0
	s.queue = pending.New()
	s.inuse = newTeamLoad()
	s.deps = deps.New()
}

// Apply applies one command and returns its result. A Batch yields a
// []Result, one per entry, in order; an Encoded command (proposed in
// process, with no Raft between) is decoded first, as a replica would.
func (s *Store) Apply(c command.Command) any {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.wake()
	defer s.flushOutput()
	if checkOwnership { // as if a capture came before every command
		s.gen.Add(1)
		s.freezeTables()
	}
	if e, ok := c.(command.Encoded); ok { // proposed in process, not through Raft
		d, err := e.Decode()
		if err != nil {
			return Refused(fmt.Errorf("%w: %v", ErrInvalid, err))
		}
		c = d
	}
	if b, ok := c.(command.Batch); ok {
		entries := command.Unbatch(b)
		out := make([]Result, len(entries))
		for i, e := range entries {
			if e.Err != nil {
				out[i] = Refused(fmt.Errorf("%w: %v", ErrInvalid, e.Err))
				continue
			}
			out[i] = s.applyOne(e.Command)
		}
		return out
	}
	return s.applyOne(c)
}

// wake closes the change channels; must be called with mu held.
func (s *Store) wake() {
	s.version++
	close(s.changedCh)
	s.changedCh = make(chan struct{})
	if s.pendingUp {
		close(s.pendingCh)
		s.pendingCh = make(chan struct{})
		s.pendingUp = false
	}
}

// markPending records that work became available, waking acquirers.
func (s *Store) markPending() { s.pendingUp = true }

// Changed returns a channel closed at the next applied command.
func (s *Store) Changed() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changedCh
}

// PendingChanged returns a channel closed when work may have become
// available (a job submitted, a task requeued, a worker's inventory changed).
func (s *Store) PendingChanged() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pendingCh
}

// NodeHTTPAddr returns the HTTP address a coordinator registered.
func (s *Store) NodeHTTPAddr(nodeID string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes[nodeID]
}

func (s *Store) nextSeq() uint64 {
	s.seq++
	return s.seq
}
