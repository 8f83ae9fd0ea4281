package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/gpulayer/gpulayer/agent/gpucdi"
	"github.com/gpulayer/gpulayer/agent/runner"
	"github.com/gpulayer/gpulayer/plugins/container"
	"github.com/gpulayer/gpulayer/sdk/api"
)

// The agent's CDI spec (docs/containers.md): the gpulayer.io/gpu devices
// of its healthy GPUs, MIG devices and running shares, kept in
// Config.CDIDir for the container executor and any CDI consumer. It is
// written at start, when the inventory or a GPU's health changes, before
// each task starts (a share's device is added then) and every
// cdiRefreshInterval (ended shares leave it), and removed when the agent
// stops.

// cdiRefreshInterval is how often the spec is built again in any case.
const cdiRefreshInterval = 30 * time.Second

// cdiFile is the spec's file name: one per agent (per data dir), so that
// agents sharing a host do not write over each other's.
func (a *Agent) cdiFile() string {
	abs, err := filepath.Abs(a.cfg.DataDir)
	if err != nil {
		abs = a.cfg.DataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "gpulayer-" + hex.EncodeToString(sum[:6]) + ".json"
}

// refreshCDI builds the spec from what the agent knows now and writes it
// if it changed; with no healthy GPU it removes it. A failure is logged
// once until a write succeeds again.
func (a *Agent) refreshCDI() {
	if a.cfg.CDIDir == "" {
		return
	}
	devs := a.deviceView()
	a.mu.Lock()
	nodes := maps.Clone(a.gpuNodes)
	a.mu.Unlock()
	var shares []gpucdi.Share
	if a.runner != nil {
		mps := a.mpsNow()
		for _, s := range a.runner.Shares() {
			shares = append(shares, gpucdi.Share{AttemptID: s.AttemptID, GPU: s.GPU, Env: runner.ShareEnv(s.MiB, mps), MPSPipeDir: mps})
		}
	}
	a.cdiMu.Lock()
	defer a.cdiMu.Unlock()
	spec, err := gpucdi.Build(gpucdi.Inventory{Devices: devs, Nodes: nodes, Shares: shares})
	var changed bool
	switch {
	case errors.Is(err, gpucdi.ErrEmpty):
		err = gpucdi.Remove(a.cfg.CDIDir, a.cdiFile())
	case err == nil:
		changed, err = gpucdi.Write(a.cfg.CDIDir, a.cdiFile(), spec)
	}
	if err != nil {
		if !a.cdiFailing {
			a.log.Warn("writing the CDI spec failed; container tasks cannot be given GPUs until it succeeds", "dir", a.cfg.CDIDir, "error", err)
		}
		a.cdiFailing = true
		return
	}
	a.cdiFailing = false
	if changed {
		a.log.Debug("CDI spec written", "path", filepath.Join(a.cfg.CDIDir, a.cdiFile()), "devices", len(spec.Devices))
	}
}

// cdiFor is the runner's CDI hook: for a container task, the spec
// written now (with the assignment's share, whose user the runner holds
// by now), the names of its devices and the spec's directory. Tasks of
// other executors are told nothing.
func (a *Agent) cdiFor(as api.Assignment) ([]string, string) {
	if a.cfg.CDIDir == "" || len(as.Devices) == 0 || as.Executor != container.Name {
		return nil, ""
	}
	a.refreshCDI()
	if as.Resources.Shared() && len(as.Devices) == 1 {
		return []string{gpucdi.Qualified(gpucdi.ShareName(as.Devices[0], as.AttemptID))}, a.cfg.CDIDir
	}
	names := make([]string, 0, len(as.Devices))
	for _, d := range slices.Clip(as.Devices) {
		names = append(names, gpucdi.Qualified(d))
	}
	return names, a.cfg.CDIDir
}

// keepCDI refreshes the spec every cdiRefreshInterval until ctx ends,
// then removes it.
func (a *Agent) keepCDI(ctx context.Context) {
	if a.cfg.CDIDir == "" {
		return
	}
	defer func() {
		a.cdiMu.Lock()
		defer a.cdiMu.Unlock()
		if err := gpucdi.Remove(a.cfg.CDIDir, a.cdiFile()); err != nil {
			a.log.Warn("removing the CDI spec", "error", err)
		}
	}()
	for {
		a.refreshCDI()
		select {
		case <-ctx.Done():
			return
		case <-a.cfg.Clock.After(cdiRefreshInterval):
		}
	}
}

// containerReapTimeout bounds the removal of an earlier run's containers.
const containerReapTimeout = 30 * time.Second

// reapContainers removes, where this agent runs the container executor,
// the containers an earlier run of it left (the agent or its plugin
// killed with tasks running): they are its, by their task root label, and
// no task of this run has started yet.
func (a *Agent) reapContainers(root string) {
	if !slices.Contains(a.cfg.Executors.Names(), container.Name) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), containerReapTimeout)
	defer cancel()
	container.ReapAgent(ctx, root, a.log)
}
