package cuda

import "errors"

// ErrUnavailable: the CUDA libraries could not be loaded, or this build
// has no cgo.
var ErrUnavailable = errors.New("CUDA is unavailable")
