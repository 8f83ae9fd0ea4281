// Package nvmltest is a test fixture for code that talks to NVML through
// go-nvml's nvml.Interface. It builds one of go-nvml's mock DGX servers
// (see Machines) and makes every NVML call on it answerable, so that health,
// topology, MIG and metrics code can be tested without a GPU.
//
// go-nvml's mock servers implement device identity, memory and MIG
// create/list only; every other method is a nil func field that panics when
// called. New replaces every func field of the mock Interface, of each mock
// Device, of each EventSet it creates and of each MIG GPU and compute
// instance the mock creates, by reflection, so the fixture stays complete as
// go-nvml grows. A call is then answered by the first of these that applies:
//
//  1. GPU lost: after InjectGPULost(i), every call about device i returns
//     nvml.ERROR_GPU_IS_LOST.
//  2. A failure rule set with Fail or FailCall.
//  3. The fixture's own answer, when the test has configured it: events
//     (EventSetCreate, RegisterEvents, Wait), topology (SetTopology and
//     friends), metrics (SetUtilization and friends), ECC, processes.
//  4. The mock server's own function.
//  5. Otherwise the call is unconfigured: it returns zero values and, when
//     its last result is an nvml.Return, nvml.ERROR_NOT_SUPPORTED. With the
//     Strict option it panics instead, naming the method, so that a test
//     notices calls it did not plan for.
//
// Interface methods that go-nvml implements by calling a method of their
// first argument, such as DeviceGetUUID(d) for d.GetUUID(), do the same
// here, so code under test may use either form and both see the same
// answers and failures.
//
// A Machine is safe for concurrent use: tests may inject events, set
// failures and change metrics while the code under test calls NVML from
// other goroutines. Configuration set after the code under test has started
// takes effect on the next call.
//
// go-nvml needs cgo, so everything in this package except this comment is
// built only under the "cgo && linux" constraint, like package
// agent/devices/nvml.
package nvmltest
