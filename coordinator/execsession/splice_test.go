package execsession

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// pipeEnd is an Endpoint over two channels: what it reads and what it
// wrote.
type pipeEnd struct {
	in  chan api.ExecFrame
	out chan api.ExecFrame
}

func newPipeEnd() *pipeEnd {
	return &pipeEnd{in: make(chan api.ExecFrame, 16), out: make(chan api.ExecFrame, 16)}
}

func (p *pipeEnd) Read(ctx context.Context) (api.ExecFrame, error) {
	select {
	case f, ok := <-p.in:
		if !ok {
			return api.ExecFrame{}, io.EOF
		}
		return f, nil
	case <-ctx.Done():
		return api.ExecFrame{}, ctx.Err()
	}
}

func (p *pipeEnd) Write(ctx context.Context, f api.ExecFrame) error {
	select {
	case p.out <- f:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func next(t *testing.T, c chan api.ExecFrame) api.ExecFrame {
	t.Helper()
	select {
	case f := <-c:
		return f
	case <-time.After(5 * time.Second):
		t.Fatal("no frame")
		return api.ExecFrame{}
	}
}

func TestSpliceCarriesBothWaysUntilExit(t *testing.T) {
	client, agent := newPipeEnd(), newPipeEnd()
	done := make(chan Outcome, 1)
	go func() {
		done <- Splice(context.Background(), client, agent, api.ExecFrame{Type: api.ExecStart, Command: []string{"cat"}})
	}()
	if f := next(t, agent.out); f.Type != api.ExecStart || f.Command[0] != "cat" {
		t.Fatalf("first frame to the agent: %+v", f)
	}
	client.in <- api.ExecFrame{Type: api.ExecStdin, Data: []byte("hi")}
	client.in <- api.ExecFrame{Type: api.ExecResize, Rows: 40, Cols: 100}
	if f := next(t, agent.out); f.Type != api.ExecStdin || string(f.Data) != "hi" {
		t.Fatalf("stdin: %+v", f)
	}
	if f := next(t, agent.out); f.Type != api.ExecResize || f.Rows != 40 || f.Cols != 100 {
		t.Fatalf("resize: %+v", f)
	}
	agent.in <- api.ExecFrame{Type: api.ExecStdout, Data: []byte("hi")}
	agent.in <- api.ExecFrame{Type: api.ExecExit, Code: 3}
	if f := next(t, client.out); f.Type != api.ExecStdout || string(f.Data) != "hi" {
		t.Fatalf("stdout: %+v", f)
	}
	if f := next(t, client.out); f.Type != api.ExecExit || f.Code != 3 {
		t.Fatalf("exit: %+v", f)
	}
	o := <-done
	if !o.Exited || o.Code != 3 {
		t.Fatalf("outcome %+v", o)
	}
}

func TestSpliceRefusesFramesTheSenderMayNotSend(t *testing.T) {
	big := make([]byte, api.MaxExecFrameData+1)
	for _, c := range []struct {
		name string
		f    api.ExecFrame
	}{
		{"exit from the client", api.ExecFrame{Type: api.ExecExit, Code: 0}},
		{"start from the client", api.ExecFrame{Type: api.ExecStart, Command: []string{"sh"}}},
		{"oversized stdin", api.ExecFrame{Type: api.ExecStdin, Data: big}},
		{"resize out of range", api.ExecFrame{Type: api.ExecResize, Rows: 0, Cols: 80}},
		{"stdin with a command", api.ExecFrame{Type: api.ExecStdin, Command: []string{"x"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, agent := newPipeEnd(), newPipeEnd()
			done := make(chan Outcome, 1)
			go func() { done <- Splice(context.Background(), client, agent, api.ExecFrame{Type: api.ExecStart}) }()
			next(t, agent.out)
			client.in <- c.f
			o := <-done
			if !errors.Is(o.Err, ErrBadFrame) || o.Exited {
				t.Fatalf("outcome %+v", o)
			}
			if f := next(t, client.out); f.Type != api.ExecError || f.ErrorCode != string(api.CodeInvalidArgument) {
				t.Fatalf("client told %+v", f)
			}
			select {
			case f := <-agent.out:
				t.Fatalf("the agent got %+v", f)
			default:
			}
		})
	}
}

func TestSpliceEndsWhenTheAgentGoes(t *testing.T) {
	client, agent := newPipeEnd(), newPipeEnd()
	done := make(chan Outcome, 1)
	go func() { done <- Splice(context.Background(), client, agent, api.ExecFrame{Type: api.ExecStart}) }()
	next(t, agent.out)
	close(agent.in)
	o := <-done
	if o.Exited || o.Err == nil {
		t.Fatalf("outcome %+v", o)
	}
	if f := next(t, client.out); f.Type != api.ExecError {
		t.Fatalf("client told %+v", f)
	}
}
