package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/execstream"
)

// TermSize is a terminal's size.
type TermSize struct{ Rows, Cols int }

// ExecOptions is a command to run in a running task and its streams.
type ExecOptions struct {
	Command []string
	// TTY runs it on a terminal of Size (zero: 24x80); its output all
	// comes on Stdout then.
	TTY  bool
	Size TermSize
	// Stdin is sent until its EOF (nil: none); Stdout and Stderr receive
	// the output (nil: discarded).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Resize delivers new terminal sizes (TTY only; may be nil).
	Resize <-chan TermSize
}

// OpenExec opens an exec session in a running task (POST
// /v1/tasks/{id}/exec); attach to it with DialExec at its AttachPath.
func (c *Client) OpenExec(ctx context.Context, taskID string, req api.ExecRequest) (api.ExecSession, error) {
	var out api.ExecSession
	err := c.Do(ctx, http.MethodPost, "/v1/tasks/"+taskID+"/exec", req, &out)
	return out, err
}

// DialExec opens the WebSocket of an exec session at path, on the
// coordinator the client talks to, with the client's credential (a
// client attaching, or an agent dialling the path its heartbeat named).
// A refusal is the protocol error the coordinator answered.
func (c *Client) DialExec(ctx context.Context, path string) (*execstream.Conn, error) {
	base, token := c.base()
	h := http.Header{}
	h.Set(api.ProtocolHeader, api.ProtocolVersion)
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	var tlsCfg = c.tlsConfig()
	conn, err := execstream.Dial(ctx, base+path, h, tlsCfg)
	var de *execstream.DialError
	if errors.As(err, &de) && de.Body != nil {
		var body api.ErrorBody
		if json.Unmarshal(de.Body, &body) == nil && body.Error != nil {
			body.Error.Status = de.Status
			return nil, body.Error
		}
	}
	return conn, err
}

// Exec runs a command in a running task and returns its exit code once it
// ended and its output was written. ctx ending ends the session (the
// command is killed).
func (c *Client) Exec(ctx context.Context, taskID string, o ExecOptions) (int, error) {
	sess, err := c.OpenExec(ctx, taskID, api.ExecRequest{Command: o.Command, TTY: o.TTY, Rows: o.Size.Rows, Cols: o.Size.Cols})
	if err != nil {
		return -1, err
	}
	conn, err := c.DialExec(ctx, sess.AttachPath)
	if err != nil {
		return -1, err
	}
	defer conn.CloseNow()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go sendExecInput(ctx, conn, o)
	return readExecOutput(ctx, conn, o)
}

// sendExecInput sends stdin in bounded frames, then its end, and the
// resizes, until ctx ends.
func sendExecInput(ctx context.Context, conn *execstream.Conn, o ExecOptions) {
	if o.Resize != nil {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case sz := <-o.Resize:
					if conn.Write(ctx, api.ExecFrame{Type: api.ExecResize, Rows: sz.Rows, Cols: sz.Cols}) != nil {
						return
					}
				}
			}
		}()
	}
	if o.Stdin != nil {
		buf := make([]byte, api.MaxExecFrameData)
		for {
			n, err := o.Stdin.Read(buf)
			if n > 0 && conn.Write(ctx, api.ExecFrame{Type: api.ExecStdin, Data: append([]byte(nil), buf[:n]...)}) != nil {
				return
			}
			if err != nil {
				break
			}
		}
	}
	_ = conn.Write(ctx, api.ExecFrame{Type: api.ExecStdinEOF})
}

// readExecOutput writes the output frames until the exit code or an
// error frame.
func readExecOutput(ctx context.Context, conn *execstream.Conn, o ExecOptions) (int, error) {
	for {
		f, err := conn.Read(ctx)
		if err != nil {
			return -1, fmt.Errorf("client: exec session ended without an exit code: %w", err)
		}
		var w io.Writer
		switch f.Type {
		case api.ExecStdout:
			w = o.Stdout
		case api.ExecStderr:
			w = o.Stderr
		case api.ExecExit:
			_ = conn.Close()
			return f.Code, nil
		case api.ExecError:
			return -1, &api.Error{Code: api.Code(f.ErrorCode), Message: strings.TrimSpace(f.Message)}
		default:
			return -1, fmt.Errorf("client: unexpected exec frame %q", f.Type)
		}
		if w != nil {
			if _, err := w.Write(f.Data); err != nil {
				return -1, err
			}
		}
	}
}
