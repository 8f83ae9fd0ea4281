package executortest

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// Output is a task's output as Logs delivered it.
type Output struct {
	mu     sync.Mutex
	stdout bytes.Buffer
	stderr bytes.Buffer
	chunks int
}

// Stdout returns everything received on stdout so far.
func (o *Output) Stdout() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stdout.String()
}

// Stderr returns everything received on stderr so far.
func (o *Output) Stderr() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stderr.String()
}

// Chunks returns how many chunks were received.
func (o *Output) Chunks() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.chunks
}

// Send is a Logs send function that appends to o. It refuses chunks on
// any stream other than "stdout" and "stderr".
func (o *Output) Send(c executor.LogChunk) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.chunks++
	switch c.Stream {
	case "stdout":
		o.stdout.Write(c.Data)
	case "stderr":
		o.stderr.Write(c.Data)
	default:
		return fmt.Errorf("executortest: chunk on unknown stream %q", c.Stream)
	}
	return nil
}

// Collect calls Logs for id and returns what it delivered once Logs
// returns.
func Collect(ctx context.Context, e executor.Executor, id string) (*Output, error) {
	out := &Output{}
	err := e.Logs(ctx, id, out.Send)
	return out, err
}
