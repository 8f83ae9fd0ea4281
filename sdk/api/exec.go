package api

// Exec into a running task (PROTOCOL.md "Exec"; docs/protocol.md "Exec"
// records the shapes chosen here).
//
// A client opens a session with POST /v1/tasks/{id}/exec (ExecRequest),
// answered 201 with an ExecSession, then attaches to it at AttachPath on
// the same coordinator address: a WebSocket (GET with Upgrade) for an
// interactive session, or a POST whose body is the whole stdin and whose
// answer is the output as newline-delimited ExecFrames. The agent learns
// of the session from its heartbeat answer (ExecOffer) and dials the
// offer's URL with its worker credential; the coordinator splices the two.

// Exec bounds: every field of a request is bounded, and so is every frame.
const (
	// MaxExecArgs is the most arguments a command may have (its program
	// included); MaxExecCommandBytes bounds them all together.
	MaxExecArgs         = 256
	MaxExecCommandBytes = 64 << 10
	// MaxExecFrameData is the most bytes one frame carries.
	MaxExecFrameData = 32 << 10
	// MaxExecStdinBytes bounds the stdin of a non-interactive attach.
	MaxExecStdinBytes = 1 << 20
	// MaxExecTermSize bounds rows and cols of a terminal.
	MaxExecTermSize = 4096
	// MaxExecSessionsPerTask and MaxExecSessionsPerClient bound the
	// sessions open at once (pending or attached).
	MaxExecSessionsPerTask   = 8
	MaxExecSessionsPerClient = 16
	// ExecAttachSeconds is how long a session waits for the client and
	// the agent to attach before it expires.
	ExecAttachSeconds = 30
)

// ExecRequest is the body of POST /v1/tasks/{id}/exec.
type ExecRequest struct {
	// Command is the program and its arguments (exec form, no shell).
	Command []string `json:"command"`
	// TTY runs the command on a pseudo-terminal: stdout and stderr are
	// one stream then (stdout frames).
	TTY bool `json:"tty,omitempty"`
	// Rows and Cols are the terminal's first size (TTY only; 0: 24x80).
	Rows int `json:"rows,omitempty"`
	Cols int `json:"cols,omitempty"`
}

// ExecSession answers POST /v1/tasks/{id}/exec.
type ExecSession struct {
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	// AttachPath is where the client attaches, on the coordinator address
	// that answered.
	AttachPath string `json:"attach_path"`
	// ExpiresAt is when the session expires unless both ends attached.
	ExpiresAt string `json:"expires_at"`
}

// ExecOffer tells an agent, in its heartbeat answer, of a session waiting
// for it: it dials URL (a path on the coordinator it heartbeats to) with
// its worker credential, as a WebSocket.
type ExecOffer struct {
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	URL    string `json:"url"`
}

// Exec frame types. A frame is one JSON WebSocket text message (one line
// of the non-interactive answer).
const (
	// ExecStart (coordinator to agent, first frame): Command, TTY, Rows, Cols.
	ExecStart = "start"
	// ExecStdin carries Data to the command's stdin; ExecStdinEOF closes it.
	ExecStdin    = "stdin"
	ExecStdinEOF = "stdin_eof"
	// ExecResize carries Rows and Cols (TTY sessions).
	ExecResize = "resize"
	// ExecStdout and ExecStderr carry the command's output in Data.
	ExecStdout = "stdout"
	ExecStderr = "stderr"
	// ExecExit carries the command's exit Code: the last frame.
	ExecExit = "exit"
	// ExecError carries Message (and Code, a protocol error code in
	// ErrorCode): the session ended without an exit code.
	ExecError = "error"
)

// ExecFrame is one message of a session.
type ExecFrame struct {
	Type string `json:"type"`
	// Data is base64 in JSON.
	Data    []byte `json:"data,omitempty"`
	Rows    int    `json:"rows,omitempty"`
	Cols    int    `json:"cols,omitempty"`
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// ErrorCode is the protocol's error code of an ExecError frame.
	ErrorCode string   `json:"error_code,omitempty"`
	Command   []string `json:"command,omitempty"`
	TTY       bool     `json:"tty,omitempty"`
}
