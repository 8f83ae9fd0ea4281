//go:build !unix

package runner

import "os"

// readOutputFlags: elsewhere the Lstat before the open is the only guard.
const readOutputFlags = os.O_RDONLY
