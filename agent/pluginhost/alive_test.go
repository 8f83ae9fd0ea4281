package pluginhost

import (
	"context"
	"errors"
	"testing"

	"github.com/hashicorp/go-plugin"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

// pingCounter is a plugin's executor that counts the Info pings it gets
// and answers them with err.
type pingCounter struct {
	executor.Executor
	pings int
	err   error
}

func (p *pingCounter) Info(context.Context) (executor.Info, error) {
	p.pings++
	return executor.Info{}, p.err
}

// A plugin that answered a call within pingAfter is handed out without a
// ping: tasks of one executor do not queue behind each other's pings.
// One silent for longer is pinged, and one whose ping fails is broken.
func TestAliveSkipsThePingWhileCallsAnswer(t *testing.T) {
	remote := &pingCounter{}
	i := &instance{name: "p", client: &plugin.Client{}, events: noEvents{}}
	i.exec = &pluginExecutor{inst: i, remote: remote}

	if !i.alive(t.Context()) || remote.pings != 1 {
		t.Fatalf("a plugin that never answered: pinged %d times, want 1", remote.pings)
	}
	if err := i.check(t.Context(), nil); err != nil { // a call came back
		t.Fatal(err)
	}
	for range 10 {
		if !i.alive(t.Context()) {
			t.Fatal("a plugin that just answered is not alive")
		}
	}
	if remote.pings != 1 {
		t.Fatalf("pinged %d times after an answer, want no more than the first", remote.pings)
	}

	i.answered.Store(i.answered.Load() - int64(2*pingAfter)) // silent for longer than pingAfter
	remote.err = errors.New("connection refused")
	if i.alive(t.Context()) || remote.pings != 2 || !i.isBroken() {
		t.Fatalf("a silent plugin whose ping fails: alive, pinged %d times, broken %v", remote.pings, i.isBroken())
	}
}
