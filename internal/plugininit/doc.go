// Package plugininit writes the skeleton of an executor plugin project
// that lives outside the GpuLayer repository: a Go module with a small
// working executor, its executortest conformance test, a Makefile that
// builds the binary under the name the agent's --plugin-dir loader looks
// for, and the go.mod wiring that builds against a local GpuLayer checkout
// while the module is not published. `gpulayer plugin init` is its
// command line.
package plugininit
