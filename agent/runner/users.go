package runner

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// User is the identity a task runs as.
type User struct {
	// UID and GID are the task's ids; meaningful when Switch is set.
	UID, GID uint32
	// Name is what the task finds in USER and LOGNAME.
	Name string
	// Switch is set when the task runs as UID/GID rather than as the
	// agent's own user: the runner chowns the task directory to it and
	// names it to the executor (executor.EnvTaskUID/EnvTaskGID).
	Switch bool
	// Exclusive is set when no other task runs as this user while this
	// one does: once the task ended, every process left under the uid is
	// killed before the user is handed out again.
	Exclusive bool
}

// Users hands out the users tasks run as. Acquire is called once per task
// before it starts and Release once after it ended, clean when the caller
// saw that nothing runs under the user any more; implementations are safe
// for concurrent use.
type Users interface {
	Acquire() (User, error)
	Release(u User, clean bool)
}

// ErrNoTaskUser is returned by UIDPool.Acquire when every uid of the pool
// is in use.
var ErrNoTaskUser = errors.New("no free task uid: every uid of the task uid range is running a task")

// UIDPool gives each running task its own uid (and a gid of the same
// number) from base upwards, the lowest free one first, so that with at
// most N tasks at once only base … base+N-1 are used. A uid is never
// handed to a second task while a first one holds it, so one task cannot
// signal another, read its /proc/<pid>/environ or enter its directory.
//
// A uid is free only if no live process runs under it, and that is looked
// up (a /proc scan) every time, right before the uid is handed out: a
// process of the uid that survived its task (the runner's clean-up
// missed it, or it ran outside the task's sandbox) would share the uid
// with the next task, reach its processes and read its files. Such a uid
// is skipped while anything runs under it; so is one that another agent
// on the same host, with an overlapping range, uses.
type UIDPool struct {
	base uint32
	size int
	busy func(uid uint32) bool

	mu   sync.Mutex
	used []bool
}

// NewUIDPool returns a pool of size uids from base.
func NewUIDPool(base uint32, size int) *UIDPool {
	return &UIDPool{base: base, size: size, busy: uidInUse, used: make([]bool, size)}
}

// uidInUse reports whether any live process runs under uid, or whether
// that could not be told (a scan that failed): such a uid is not free.
func uidInUse(uid uint32) bool {
	pids, err := processesOf(uid)
	return err != nil || len(pids) > 0
}

// Acquire implements Users.
func (p *UIDPool) Acquire() (User, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, taken := range p.used {
		if !taken && !p.busy(p.base+uint32(i)) {
			p.used[i] = true
			id := p.base + uint32(i)
			return User{UID: id, GID: id, Name: "gpulayer-" + strconv.FormatUint(uint64(id), 10), Switch: true, Exclusive: true}, nil
		}
	}
	return User{}, fmt.Errorf("%w (%d uids from %d)", ErrNoTaskUser, p.size, p.base)
}

// Release implements Users. Whether the caller saw the uid clean or not,
// it is looked up again before its next task (Acquire).
func (p *UIDPool) Release(u User, _ bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := int(u.UID) - int(p.base); u.UID >= p.base && i < p.size {
		p.used[i] = false
	}
}

// FixedUser runs every task as one configured user. Concurrent tasks share
// it, so they are kept from the agent but not from each other.
type FixedUser User

// Acquire implements Users.
func (f FixedUser) Acquire() (User, error) {
	u := User(f)
	u.Switch, u.Exclusive = true, false
	return u, nil
}

// Release implements Users.
func (FixedUser) Release(User, bool) {}

// SharedUser runs tasks as the agent's own user (no switch): an agent
// that is not root and was told to accept that. Name is for USER/LOGNAME.
type SharedUser struct{ Name string }

// Acquire implements Users.
func (s SharedUser) Acquire() (User, error) { return User{Name: s.Name}, nil }

// Release implements Users.
func (SharedUser) Release(User, bool) {}
