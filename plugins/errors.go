package plugins

import "errors"

// ErrUnknownPlugin is returned by ServeBuiltin for a name that is not a
// built-in executor.
var ErrUnknownPlugin = errors.New("plugins: unknown built-in executor")
