// Package execstream carries exec sessions' frames (api.ExecFrame) over
// WebSocket connections (github.com/coder/websocket), one JSON text
// message per frame. The coordinator accepts the client's and the agent's
// connections with it; the agent and sdk/client dial with it.
package execstream
