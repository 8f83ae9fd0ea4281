package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gpulayer/gpulayer/agent/devices/nvml"
	"github.com/gpulayer/gpulayer/internal/clock"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// MIG layouts. A heartbeat answer's mig_layouts orders a GPU's MIG layout
// (an admin's PUT .../mig, or the coordinator's auto mode). The
// coordinators already give the GPU no new task; the agent waits for the
// tasks on it (or on its MIG devices) to end, within Config.MIGDrainBound,
// repartitions it through the device source (nvml.Source.Repartition),
// reads its GPUs again, and reports, on the GPU, the order's generation
// (mig_request) and why it failed (mig_error; empty: applied). An order is
// acted on once per generation.

// DefaultMIGDrainBound is how long the agent waits for the tasks on a GPU
// to end before it gives a repartition up (Config.MIGDrainBound).
const DefaultMIGDrainBound = 10 * time.Minute

// migPoll is how often a drain looks again at the tasks on the GPU.
const migPoll = time.Second

// Repartitioner sets a GPU's MIG layout; the device source implements it
// where it can (nvml.Source).
type Repartitioner interface {
	Repartition(ctx context.Context, uuid string, layout []string) error
}

var (
	// errDrainBound is a drain that did not end within the bound.
	errDrainBound = errors.New("the GPU did not drain")
	// errWithdrawn is an order cleared or replaced while its GPU drained:
	// the GPU is left as it is.
	errWithdrawn = errors.New("the MIG layout request was withdrawn or replaced while the GPU drained; the GPU is left as it is")
)

// migOutcome is what the agent last did with an order for one GPU.
type migOutcome struct {
	generation uint64
	err        string
	done       bool
}

// migLayouts tracks the orders acted on, by GPU.
type migLayouts struct {
	mu sync.Mutex
	by map[string]migOutcome
	// ordered is the last heartbeat answer's orders: generation by GPU.
	ordered map[string]uint64
	wg      sync.WaitGroup // the orders being acted on
}

// heard keeps the orders of the last heartbeat answer.
func (m *migLayouts) heard(orders []api.MIGLayoutOrder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ordered = make(map[string]uint64, len(orders))
	for _, o := range orders {
		m.ordered[o.UUID] = o.Generation
	}
}

// stillOrdered reports whether the last answer still orders o: an admin
// may clear or replace a request while its GPU drains.
func (m *migLayouts) stillOrdered(o api.MIGLayoutOrder) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ordered[o.UUID] == o.Generation
}

// take claims order o for acting on, unless it was taken already.
func (m *migLayouts) take(o api.MIGLayoutOrder) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.by == nil {
		m.by = map[string]migOutcome{}
	}
	if prev, ok := m.by[o.UUID]; ok && prev.generation >= o.Generation {
		return false
	}
	m.by[o.UUID] = migOutcome{generation: o.Generation}
	return true
}

func (m *migLayouts) settle(uuid string, generation uint64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := migOutcome{generation: generation, done: true}
	if err != nil {
		out.err = clipReason(err.Error(), api.MaxDeviceHealthReasonBytes)
	}
	m.by[uuid] = out
}

// stamp writes, on each GPU of devs an order was settled for, its
// generation and failure.
func (m *migLayouts) stamp(devs []api.Device) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range devs {
		if o, ok := m.by[devs[i].UUID]; ok && o.done && devs[i].Parent == "" {
			devs[i].MIGRequest, devs[i].MIGError = o.generation, o.err
		}
	}
}

// migOrders starts acting on each new order of a heartbeat answer.
func (a *Agent) migOrders(ctx context.Context, orders []api.MIGLayoutOrder) {
	a.migs.heard(orders)
	for _, o := range orders {
		if !a.migs.take(o) {
			continue
		}
		a.log.Info("MIG layout ordered; draining the GPU", "uuid", o.UUID, "layout", o.Layout, "generation", o.Generation)
		a.migs.wg.Add(1)
		go func() {
			defer a.migs.wg.Done()
			err := a.applyMIG(ctx, o)
			if ctx.Err() != nil {
				return // the agent stops: the order stays pending, for its next start
			}
			a.migs.settle(o.UUID, o.Generation, err)
			if err != nil {
				a.log.Warn("MIG layout not applied", "uuid", o.UUID, "layout", o.Layout, "error", err)
			} else {
				a.log.Info("MIG layout applied", "uuid", o.UUID, "layout", o.Layout)
			}
			a.leases.nudgeHeartbeat() // the coordinator learns at once
		}()
	}
}

// applyMIG drains GPU o.UUID, repartitions it and reads the GPUs again.
func (a *Agent) applyMIG(ctx context.Context, o api.MIGLayoutOrder) error {
	rp, ok := a.cfg.Devices.(Repartitioner)
	if !ok {
		return nvml.ErrNoRepartition
	}
	if err := a.drainForMIG(ctx, o.UUID); err != nil {
		return err
	}
	if !a.migs.stillOrdered(o) {
		return errWithdrawn
	}
	err := rp.Repartition(ctx, o.UUID, o.Layout)
	// Read the GPUs again whatever came of it: a failure part-way leaves
	// the GPU as NVML shows it, and that is what is reported.
	if devs, rerr := a.cfg.Devices.Devices(ctx); rerr == nil {
		a.mu.Lock()
		a.devices = devs
		a.mu.Unlock()
		a.readDeviceNodes(ctx)
		a.refreshCDI()
	} else if err == nil {
		err = fmt.Errorf("reading the GPUs after the repartition: %w", rerr)
	}
	return err
}

// drainForMIG waits, within the drain bound, until no task holds GPU uuid
// or one of its MIG devices.
func (a *Agent) drainForMIG(ctx context.Context, uuid string) error {
	bound := a.cfg.MIGDrainBound
	if bound <= 0 {
		bound = DefaultMIGDrainBound
	}
	return waitDrained(ctx, a.cfg.Clock, bound, func() []string {
		return a.runner.TasksOn(a.withMIGDevices([]string{uuid})...)
	})
}

// waitDrained polls held, the tasks on a GPU, until it lists none, for at
// most bound.
func waitDrained(ctx context.Context, clk clock.Clock, bound time.Duration, held func() []string) error {
	deadline := clk.Now().Add(bound)
	for {
		tasks := held()
		if len(tasks) == 0 {
			return nil
		}
		left := deadline.Sub(clk.Now())
		if left <= 0 {
			return fmt.Errorf("%w within the %s bound: task(s) %s still hold it (gpulayer gpu drain requeues them)", errDrainBound, bound, strings.Join(tasks, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(min(migPoll, left)):
		}
	}
}
