package plugininit

import "errors"

// Sentinel errors of Write.
var (
	// ErrInvalidName is returned for a plugin name that cannot name an
	// executor.
	ErrInvalidName = errors.New("invalid plugin name")
	// ErrInvalidModule is returned for a module path go.mod cannot hold.
	ErrInvalidModule = errors.New("invalid module path")
	// ErrNotEmpty is returned when the target directory already holds
	// files: Write never overwrites anything.
	ErrNotEmpty = errors.New("directory is not empty")
)
