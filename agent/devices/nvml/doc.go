// Package nvml reads GPU inventory and health through NVIDIA's NVML library
// (github.com/NVIDIA/go-nvml). It is the only package in GpuLayer that
// imports go-nvml.
//
// go-nvml needs cgo: its pkg/nvml package (and therefore its mock servers
// under pkg/nvml/mock, which import it for their types) does not compile with
// CGO_ENABLED=0. Everything that touches go-nvml is therefore built only
// under the "cgo && linux" constraint. Other builds get a stand-in whose Open
// reports ErrNoCgo and whose fake GPU sets are served from a pure-Go table
// that a cgo-only test keeps identical to go-nvml's mock servers.
//
// The library is loaded with dlopen at run time, so a cgo build links and
// starts on machines without an NVIDIA driver; Open then reports
// ErrUnavailable and never calls NVML again (any NVML call after a failed
// Init may kill the process).
package nvml
