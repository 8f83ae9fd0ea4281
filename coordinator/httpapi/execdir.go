package httpapi

import "github.com/gpulayer/gpulayer/sdk/api"

// validateExecDir refuses an exec config dir that would leave the task's
// directory (absolute, or climbing out with ".."), before anything is
// proposed. The exec executor checks it again on the worker, symbolic
// links resolved. Called after the size bounds, so dir is short enough
// to quote.
func validateExecDir(c *api.ExecConfig) error {
	if err := api.CheckExecDir(c.Dir); err != nil {
		return invalidf("config.dir %q %v", c.Dir, err)
	}
	return nil
}
