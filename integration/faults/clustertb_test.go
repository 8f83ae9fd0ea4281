package faults

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// clusterTB is the testing.TB a schedule's cluster runs under. It is the
// schedule's test, except that the cluster's cleanups (stopping the nodes,
// closing the link proxies) and its data directories are kept, to be
// released in the background once the schedule has been checked: a
// coordinator's graceful stop waits up to 5 s for connections a peer
// opened and never used (net/http's Shutdown treats a new connection as
// busy for its first 5 s), and that wait need not hold up the next
// schedule. Errors reported after the schedule ended are kept for the
// campaign to report.
type clusterTB struct {
	testing.TB

	mu       sync.Mutex
	cleanups []func()
	dirs     []string
	detached bool
	late     []string
}

func (c *clusterTB) Cleanup(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cleanups = append(c.cleanups, f)
}

func (c *clusterTB) TempDir() string {
	c.TB.Helper()
	d, err := os.MkdirTemp("", "gpulayer-faults-")
	if err != nil {
		c.TB.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dirs = append(c.dirs, d)
	return d
}

// report sends an error to the schedule's test, or keeps it once the
// schedule has ended.
func (c *clusterTB) report(s string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.detached {
		c.late = append(c.late, s)
		return false
	}
	return true
}

func (c *clusterTB) Errorf(format string, args ...any) {
	if c.report(fmt.Sprintf(format, args...)) {
		c.TB.Helper()
		c.TB.Errorf(format, args...)
	}
}

func (c *clusterTB) Error(args ...any) {
	if c.report(fmt.Sprint(args...)) {
		c.TB.Helper()
		c.TB.Error(args...)
	}
}

// Logf drops what is logged once the schedule has ended.
func (c *clusterTB) Logf(format string, args ...any) {
	c.mu.Lock()
	detached := c.detached
	c.mu.Unlock()
	if !detached {
		c.TB.Logf(format, args...)
	}
}

// release runs the kept cleanups together, then removes the data
// directories, and returns the errors reported meanwhile. The schedule's
// test must not be used by the cluster any more.
func (c *clusterTB) release() []string {
	c.mu.Lock()
	c.detached = true
	cleanups := c.cleanups
	c.cleanups = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range cleanups {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.dirs {
		if err := os.RemoveAll(d); err != nil {
			c.late = append(c.late, err.Error())
		}
	}
	return c.late
}
