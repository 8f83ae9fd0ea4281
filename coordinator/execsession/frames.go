package execsession

import (
	"fmt"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ClientFrame checks a frame a client sends: stdin data, the end of
// stdin, or a terminal size, each bounded.
func ClientFrame(f api.ExecFrame) error {
	switch f.Type {
	case api.ExecStdin:
		if len(f.Data) > api.MaxExecFrameData {
			return fmt.Errorf("%w: a stdin frame carries at most %d bytes", ErrBadFrame, api.MaxExecFrameData)
		}
	case api.ExecStdinEOF:
	case api.ExecResize:
		if err := TermSize(f.Rows, f.Cols, false); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: a client may send stdin, stdin_eof and resize frames, not %q", ErrBadFrame, f.Type)
	}
	if f.Message != "" || f.Command != nil || f.Code != 0 || f.ErrorCode != "" || f.TTY {
		return fmt.Errorf("%w: a %s frame carries only its own fields", ErrBadFrame, f.Type)
	}
	return nil
}

// AgentFrame checks a frame an agent sends: output, the exit code or an
// error.
func AgentFrame(f api.ExecFrame) error {
	switch f.Type {
	case api.ExecStdout, api.ExecStderr:
		if len(f.Data) > api.MaxExecFrameData {
			return fmt.Errorf("%w: an output frame carries at most %d bytes", ErrBadFrame, api.MaxExecFrameData)
		}
	case api.ExecExit, api.ExecError:
		if len(f.Message) > 4096 {
			return fmt.Errorf("%w: an error message is at most 4096 bytes", ErrBadFrame)
		}
	default:
		return fmt.Errorf("%w: an agent may send stdout, stderr, exit and error frames, not %q", ErrBadFrame, f.Type)
	}
	return nil
}

// TermSize checks a terminal size: 1 to MaxExecTermSize each, or both 0
// where zero is allowed (the default size).
func TermSize(rows, cols int, zeroOK bool) error {
	if zeroOK && rows == 0 && cols == 0 {
		return nil
	}
	if rows < 1 || rows > api.MaxExecTermSize || cols < 1 || cols > api.MaxExecTermSize {
		return fmt.Errorf("%w: rows and cols are 1 to %d", ErrBadFrame, api.MaxExecTermSize)
	}
	return nil
}
