package execsession

import (
	"context"
	"errors"
	"fmt"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// Endpoint is one end of a session: a client's or an agent's connection,
// reading and writing whole frames.
type Endpoint interface {
	Read(ctx context.Context) (api.ExecFrame, error)
	Write(ctx context.Context, f api.ExecFrame) error
}

// Outcome is how a spliced session ended.
type Outcome struct {
	// Exited is set when the command's exit code reached the client.
	Exited bool
	Code   int
	// Err says why it ended otherwise.
	Err error
}

// Splice sends the start frame to the agent, then carries the client's
// stdin and resizes to the agent and the agent's output to the client
// until the agent sends the exit code or an error, or either end goes. A
// frame its sender may not send ends the session with ErrBadFrame (the
// client is told so).
func Splice(ctx context.Context, client, agent Endpoint, start api.ExecFrame) Outcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := agent.Write(ctx, start); err != nil {
		return Outcome{Err: fmt.Errorf("start the command on the agent: %w", err)}
	}
	up := make(chan error, 1)
	go func() { up <- pump(ctx, client, agent, ClientFrame) }()
	down := make(chan Outcome, 1)
	go func() { down <- drain(ctx, agent, client) }()
	select {
	case o := <-down:
		return o
	case err := <-up:
		if errors.Is(err, ErrBadFrame) {
			_ = client.Write(ctx, api.ExecFrame{Type: api.ExecError, ErrorCode: string(api.CodeInvalidArgument), Message: err.Error()})
		}
		return Outcome{Err: fmt.Errorf("client: %w", err)}
	}
}

// pump carries the client's frames to the agent while they pass check.
func pump(ctx context.Context, from, to Endpoint, check func(api.ExecFrame) error) error {
	for {
		f, err := from.Read(ctx)
		if err != nil {
			return err
		}
		if err := check(f); err != nil {
			return err
		}
		if err := to.Write(ctx, f); err != nil {
			return err
		}
	}
}

// drain carries the agent's frames to the client until the last one.
func drain(ctx context.Context, agent, client Endpoint) Outcome {
	for {
		f, err := agent.Read(ctx)
		if err != nil {
			o := Outcome{Err: fmt.Errorf("agent: %w", err)}
			_ = client.Write(ctx, api.ExecFrame{Type: api.ExecError, ErrorCode: string(api.CodeInternal), Message: "the agent's connection ended before the command's exit code"})
			return o
		}
		if err := AgentFrame(f); err != nil {
			_ = client.Write(ctx, api.ExecFrame{Type: api.ExecError, ErrorCode: string(api.CodeInternal), Message: "the agent sent a frame it may not send"})
			return Outcome{Err: fmt.Errorf("agent: %w", err)}
		}
		if err := client.Write(ctx, f); err != nil {
			return Outcome{Err: fmt.Errorf("client: %w", err)}
		}
		switch f.Type {
		case api.ExecExit:
			return Outcome{Exited: true, Code: f.Code}
		case api.ExecError:
			return Outcome{Err: errors.New("agent: " + f.Message)}
		}
	}
}
