package execstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// readLimit bounds one message: a frame of MaxExecFrameData bytes in
// base64, a start frame's command, with room for the JSON around them.
const readLimit = 4*api.MaxExecFrameData + 2*api.MaxExecCommandBytes

// Conn is one end of a session's WebSocket.
type Conn struct{ ws *websocket.Conn }

// Read reads one frame.
func (c *Conn) Read(ctx context.Context) (api.ExecFrame, error) {
	var f api.ExecFrame
	err := wsjson.Read(ctx, c.ws, &f)
	return f, err
}

// Write writes one frame; it is safe for concurrent use.
func (c *Conn) Write(ctx context.Context, f api.ExecFrame) error {
	return wsjson.Write(ctx, c.ws, f)
}

// Close closes the connection normally.
func (c *Conn) Close() error { return c.ws.Close(websocket.StatusNormalClosure, "") }

// CloseNow closes the connection without the closing handshake.
func (c *Conn) CloseNow() error { return c.ws.CloseNow() }

// Accept upgrades an HTTP request to a session's connection. The server's
// read and write deadlines are lifted first: a session lasts as long as
// its command.
func Accept(w http.ResponseWriter, r *http.Request) (*Conn, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	return &Conn{ws}, nil
}

// Dial opens a session's connection to url (http:// or https://) with
// header (the credential and the protocol version). tlsConfig, when set,
// is used for https; the connection is HTTP/1.1, which WebSocket needs.
func Dial(ctx context.Context, url string, header http.Header, tlsConfig *tls.Config) (*Conn, error) {
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: tlsConfig, ForceAttemptHTTP2: false}
	if tlsConfig != nil {
		cfg := tlsConfig.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		tr.TLSClientConfig = cfg
	}
	tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}, HTTPHeader: header})
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			return nil, &DialError{Status: resp.StatusCode, Body: body, Err: err}
		}
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	return &Conn{ws}, nil
}

// DialError is a refused dial, with the answer's status.
type DialError struct {
	Status int
	// Body is the start of the answer's body (a protocol error).
	Body []byte
	Err  error
}

func (e *DialError) Error() string {
	return fmt.Sprintf("exec attach refused (%d): %v", e.Status, e.Err)
}
func (e *DialError) Unwrap() error { return e.Err }
