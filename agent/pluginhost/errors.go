package pluginhost

import "errors"

var (
	// ErrUnknownExecutor is returned by Get for a name that is neither a
	// built-in executor nor a plugin in the plugin directory.
	ErrUnknownExecutor = errors.New("pluginhost: unknown executor")
	// ErrPluginStart is returned by Get when the plugin process could
	// not be launched or did not complete go-plugin's handshake.
	ErrPluginStart = errors.New("pluginhost: executor plugin failed to start")
	// ErrPluginCrashed is wrapped by the error of any call on an executor
	// whose plugin process exited unexpectedly. The task it was running
	// has failed; the next Get launches a fresh process.
	ErrPluginCrashed = errors.New("pluginhost: executor plugin crashed")
	// ErrClosed is returned by Get after Close.
	ErrClosed = errors.New("pluginhost: host closed")
)

// CrashError is the error of a call on an executor whose plugin process
// exited. It matches ErrPluginCrashed with errors.Is and reads like
// `executor plugin "exec" exited unexpectedly (exit status 3)`, a reason
// the agent can give for the failed task as is.
type CrashError struct {
	// Executor is the plugin's name.
	Executor string
	// Exit describes how the process ended ("exit status 3",
	// "signal: killed"), or is empty if unknown.
	Exit string
	// Err is the error the call itself got, usually a gRPC transport
	// error.
	Err error
	// Panic is the plugin's last words on its standard error when it
	// died of a Go panic or fatal error ("panic: …"), or empty.
	Panic string
}

func (e *CrashError) Error() string {
	msg := "executor plugin \"" + e.Executor + "\" exited unexpectedly"
	if e.Exit != "" {
		msg += " (" + e.Exit + ")"
	}
	if e.Panic != "" {
		msg += ": " + e.Panic
	}
	return msg
}

// Is makes errors.Is(err, ErrPluginCrashed) true.
func (e *CrashError) Is(target error) bool { return target == ErrPluginCrashed }

// Unwrap returns the call's own error.
func (e *CrashError) Unwrap() error { return e.Err }
