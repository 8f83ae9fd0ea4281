package httpapi

import (
	"sync"
	"time"
)

// Long polls (acquire with wait_seconds) and log follow streams hold a
// request open for seconds to minutes. Each credential may hold at most
// api.MaxLongPollsPerCredential of them at once on this coordinator; one
// more is refused with 429 rate_limited, before it waits on anything. An
// agent runs one acquire loop, so the bound leaves room for a retry that
// overlaps a poll the server has not yet seen end.

// longPollRetry is the Retry-After of a refused long poll: about the time
// a held poll takes to end.
const longPollRetry = 5 * time.Second

// longPolls counts the open long polls per credential id.
type longPolls struct {
	mu    sync.Mutex
	limit int
	open  map[string]int
}

func newLongPolls(limit int) *longPolls {
	return &longPolls{limit: limit, open: map[string]int{}}
}

// enter takes a slot for credentialID; release gives it back. It refuses
// when the credential holds the limit already.
func (l *longPolls) enter(credentialID string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[credentialID] >= l.limit {
		return nil, rateLimited("open at once with this credential (long polls and log follow streams)", longPollRetry)
	}
	l.open[credentialID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.open[credentialID]--; l.open[credentialID] <= 0 {
				delete(l.open, credentialID)
			}
		})
	}, nil
}

// total is the number of long polls open on this coordinator.
func (l *longPolls) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.open {
		n += c
	}
	return n
}
