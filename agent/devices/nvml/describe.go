//go:build cgo && linux

package nvml

import (
	"fmt"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// describe names an NVML return code without calling into NVML.
//
// gonvml.Return.Error() would call nvmlErrorString once the library has been
// loaded, and this is used right after a failed Init, when no NVML call is
// safe. The common codes get a sentence; others their go-nvml name, which
// go-nvml's built-in table gives only while the library is not loaded, so
// the numeric code is printed instead.
func describe(ret gonvml.Return) string {
	switch ret {
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return "libnvidia-ml.so.1 not found (no NVIDIA driver installed)"
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return "NVIDIA kernel driver not loaded"
	case gonvml.ERROR_NO_PERMISSION:
		return "no permission to access the NVIDIA devices"
	case gonvml.ERROR_LIB_RM_VERSION_MISMATCH:
		return "NVML library and kernel driver versions differ (reboot or reload the driver)"
	case gonvml.ERROR_UNINITIALIZED:
		return "NVML not initialised"
	case gonvml.ERROR_NOT_SUPPORTED:
		return "not supported"
	case gonvml.ERROR_GPU_IS_LOST:
		return "GPU is lost (fell off the bus)"
	case gonvml.ERROR_INVALID_ARGUMENT:
		return "invalid argument"
	case gonvml.ERROR_IN_USE:
		return "in use"
	case gonvml.ERROR_INSUFFICIENT_RESOURCES:
		return "insufficient resources"
	case gonvml.ERROR_RESET_REQUIRED:
		return "a GPU reset is required"
	case gonvml.ERROR_UNKNOWN:
		return "unknown NVML error"
	default:
		return fmt.Sprintf("NVML return code %d", int32(ret))
	}
}
