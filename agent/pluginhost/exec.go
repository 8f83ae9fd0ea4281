package pluginhost

import (
	"context"
	"errors"

	"github.com/gpulayer/gpulayer/sdk/executor"
)

var _ executor.Execer = (*pluginExecutor)(nil)

// Exec runs a command in a task of the plugin (gpulayer job exec), with
// the plugin's crash told apart as for every other call.
func (p *pluginExecutor) Exec(ctx context.Context, req executor.ExecRequest, streams executor.ExecStreams) (int, error) {
	code, err := executor.Exec(ctx, p.remote, req, streams)
	if errors.Is(err, executor.ErrExecUnsupported) {
		return code, err
	}
	return code, p.inst.check(ctx, err)
}
