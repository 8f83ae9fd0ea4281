package executor

import (
	"context"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/gpulayer/gpulayer/sdk/executor/proto"
)

// PluginName is the key of the executor plugin in go-plugin's plugin map.
const PluginName = "executor"

// Handshake is the go-plugin handshake shared by the agent and every
// executor plugin. A binary started without the magic cookie refuses to
// run as a plugin; a host and plugin with different protocol versions
// refuse each other.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "GPULAYER_PLUGIN",
	MagicCookieValue: "executor-7c1d4f0e",
}

// PluginSet returns the go-plugin plugin map for an executor: the plugin
// side passes its implementation, the host side passes nil.
func PluginSet(impl Executor) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &GRPCPlugin{Impl: impl}}
}

// GRPCPlugin is the go-plugin glue for Executor over gRPC. Impl is set on
// the plugin side only. The net/rpc protocol is not supported.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl Executor
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the executor service on the plugin's gRPC server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterExecutorServer(s, NewGRPCServer(p.Impl))
	return nil
}

// GRPCClient returns an Executor that calls the plugin over conn.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return NewGRPCClient(conn), nil
}
