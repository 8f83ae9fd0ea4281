//go:build cgo && linux

package nvmltest

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// Names of the machines New builds, one per go-nvml mock server. They equal
// the fake set names of package agent/devices/nvml (FakeDGXA100 and so on);
// this package does not import that one, so that its in-package tests can
// import this one.
const (
	DGXA100 = "dgxa100"
	DGXH100 = "dgxh100"
	DGXH200 = "dgxh200"
	DGXB200 = "dgxb200"
)

// All, given where a device index is expected, means every device of the
// machine.
const All = -1

// noDevice is the target of a call that is about no device of the machine.
const noDevice = -2

// machineKind describes one machine New can build.
type machineKind struct {
	newServer func() *server.Server
	// switchLinks is the number of NVLinks per GPU in the real machine's
	// NVSwitch fabric, and switches the number of NVSwitch chips they
	// spread over; TopologyNVSwitch uses both.
	switchLinks, switches int
}

var machines = map[string]machineKind{
	DGXA100: {dgxa100.New, 12, 6},
	DGXH100: {dgxh100.New, 18, 4},
	DGXH200: {dgxh200.New, 18, 4},
	DGXB200: {dgxb200.New, 18, 2},
}

// Machines lists the names New accepts, sorted.
func Machines() []string {
	return slices.Sorted(maps.Keys(machines))
}

// Machine is one fake server: a go-nvml mock server whose every NVML call
// the test can answer, fail or watch. Hand Interface() to the code under
// test. Its methods are safe for concurrent use.
type Machine struct {
	kind   machineKind
	srv    *server.Server
	devs   []*server.Device
	index  map[*server.Device]int // device index by handle; read-only after New
	strict bool

	// sites holds the dispatchers New installed on the Interface (as
	// "Interface.Name") and on each device (as "Device3.Name"), for the
	// package's own tests. Read-only after New.
	sites map[string]*site

	// migMu orders the filling of new MIG instances before anyone else
	// can obtain them (see mig.go).
	migMu   sync.RWMutex
	adopted map[any]bool // guarded by migMu

	mu       sync.Mutex // guards the fields below
	failures failures
	events   events
	metrics  []metrics
	topo     topology
	mig      map[int][]nvml.Device // MIG devices by GPU (SetMIGDevices)
	// created are the MIG device handles of the compute instances made
	// through NVML (migmanage.go).
	created map[*server.ComputeInstance]nvml.Device
}

// Option configures New.
type Option func(*config)

type config struct {
	strict      bool
	uuids       []string
	stableUUIDs bool
	topology    Topology
	modelName   string
}

// Strict makes every unconfigured call panic with a message naming the
// method (and the GPU, for device calls) instead of returning
// nvml.ERROR_NOT_SUPPORTED, to flag calls the test did not expect.
func Strict() Option {
	return func(c *config) { c.strict = true }
}

// WithTopology applies a topology preset, as SetTopology does.
func WithTopology(t Topology) Option {
	return func(c *config) { c.topology = t }
}

// WithModelName names every GPU name (NVML's GetName; its MIG devices
// "name MIG <profile>"), as a real machine's GPUs are named where the
// mock's differ: go-nvml names its A100 "Mock NVIDIA A100-SXM4-40GB".
func WithModelName(name string) Option {
	return func(c *config) { c.modelName = name }
}

// New builds the named machine (one of Machines). It panics on an unknown
// name or an invalid option, which are mistakes in the test.
func New(machine string, opts ...Option) *Machine {
	kind, ok := machines[machine]
	if !ok {
		panic(fmt.Sprintf("nvmltest: unknown machine %q (want one of %v)", machine, Machines()))
	}
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	srv := kind.newServer()
	m := &Machine{
		kind:    kind,
		srv:     srv,
		index:   make(map[*server.Device]int, len(srv.Devices)),
		strict:  cfg.strict,
		sites:   make(map[string]*site),
		adopted: make(map[any]bool),
	}
	for i, d := range srv.Devices {
		sd := d.(*server.Device)
		m.devs = append(m.devs, sd)
		m.index[sd] = i
	}
	n := len(m.devs)
	m.failures.lost = make([]bool, n)
	m.events.init(n)
	m.metrics = make([]metrics, n)
	m.topo.init(n)
	if cfg.stableUUIDs {
		cfg.uuids = make([]string, n)
		for i := range cfg.uuids {
			cfg.uuids[i] = StableUUID(i)
		}
	}
	if cfg.uuids != nil {
		m.setUUIDs(cfg.uuids)
	}
	if cfg.modelName != "" {
		for _, d := range m.devs {
			d.Config.Name = cfg.modelName
		}
	}
	if cfg.topology != 0 {
		m.applyTopology(cfg.topology)
	}
	m.fillInterface()
	for i := range m.devs {
		m.fillDevice(i)
	}
	return m
}

// Interface is the NVML library to hand to the code under test. Its Init
// and Shutdown succeed.
func (m *Machine) Interface() nvml.Interface {
	return m.srv
}

// Count is the number of devices.
func (m *Machine) Count() int {
	return len(m.devs)
}

// Device is device i, the handle DeviceGetHandleByIndex(i) returns.
func (m *Machine) Device(i int) nvml.Device {
	m.checkIndex(i, false)
	return m.devs[i]
}

// indexOf is the index of the device behind handle d, or noDevice when d is
// not a device of this machine.
func (m *Machine) indexOf(d any) int {
	sd, ok := d.(*server.Device)
	if !ok {
		return noDevice
	}
	if i, ok := m.index[sd]; ok {
		return i
	}
	return noDevice
}

// checkIndex panics unless i is a device index, or All when all is set.
func (m *Machine) checkIndex(i int, all bool) {
	if all && i == All {
		return
	}
	if i < 0 || i >= len(m.devs) {
		panic(fmt.Sprintf("nvmltest: no device %d (machine has %d)", i, len(m.devs)))
	}
}

// indices lists the devices i names: i itself, or every device for All.
func (m *Machine) indices(i int) []int {
	m.checkIndex(i, true)
	if i != All {
		return []int{i}
	}
	all := make([]int, len(m.devs))
	for j := range all {
		all[j] = j
	}
	return all
}
