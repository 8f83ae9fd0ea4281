package container

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpulayer/gpulayer/agent/gpucdi"
	"github.com/gpulayer/gpulayer/sdk/executor"
)

// DefaultCDIDir is where the agent writes its CDI spec unless told
// otherwise (the agent's --cdi-dir), and where CDI consumers look.
const DefaultCDIDir = "/var/run/cdi"

// Errors of the GPU translation.
var (
	// ErrCDIUnresolved: a device the task was given is in no CDI spec.
	ErrCDIUnresolved = errors.New("CDI device not found in the spec directory")
	// ErrCDIUnsupported: the spec asks for an edit a Docker daemon
	// without CDI support cannot be told through its API (hooks, network
	// devices, Intel RDT, a mount that is not a bind mount).
	ErrCDIUnsupported = errors.New("CDI edit not supported without the daemon's own CDI support")
)

// cdiNames are the task's CDI devices: as the agent names them
// (EnvCDIDevices) or, from a host that does not, its device UUIDs in the
// agent's kind.
func cdiNames(t executor.Task) []string {
	if v := t.Env[executor.EnvCDIDevices]; v != "" {
		return strings.Split(v, ",")
	}
	out := make([]string, 0, len(t.Devices))
	for _, d := range t.Devices {
		out = append(out, gpucdi.Qualified(d))
	}
	return out
}

// cdiDir is the directory of the agent's CDI spec for t.
func cdiDir(t executor.Task) string {
	if d := t.Env[executor.EnvCDIDir]; d != "" {
		return d
	}
	return DefaultCDIDir
}

// gpuPlan is how a task's devices reach its container: by name (Native,
// the daemon resolves them) or by the spec's edits applied here.
type gpuPlan struct {
	Native  bool
	Names   []string
	Env     []string
	Devices []container.DeviceMapping
	Mounts  []mount.Mount
	GIDs    []uint32
}

// resolveEdits reads the CDI specs in dirs and returns the container
// edits of the named devices: each device's own, and once each the
// common edits of the specs they come from, in order.
func resolveEdits(dirs []string, names []string) (specs.ContainerEdits, error) {
	var out specs.ContainerEdits
	if len(names) == 0 {
		return out, nil
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dirs...), cdi.WithAutoRefresh(false))
	if err != nil && cache == nil {
		return out, fmt.Errorf("reading CDI specs in %v: %w", dirs, err)
	}
	var seen []*cdi.Spec
	for _, n := range names {
		d := cache.GetDevice(n)
		if d == nil {
			return out, fmt.Errorf("%w: %q in %v (%v)", ErrCDIUnresolved, n, dirs, cache.GetErrors())
		}
		if s := d.GetSpec(); !slices.Contains(seen, s) {
			seen = append(seen, s)
			out = appendEdits(out, s.ContainerEdits)
		}
		out = appendEdits(out, d.ContainerEdits)
	}
	return out, nil
}

func appendEdits(a, b specs.ContainerEdits) specs.ContainerEdits {
	a.Env = append(a.Env, b.Env...)
	a.DeviceNodes = append(a.DeviceNodes, b.DeviceNodes...)
	a.NetDevices = append(a.NetDevices, b.NetDevices...)
	a.Hooks = append(a.Hooks, b.Hooks...)
	a.Mounts = append(a.Mounts, b.Mounts...)
	a.AdditionalGIDs = append(a.AdditionalGIDs, b.AdditionalGIDs...)
	if b.IntelRdt != nil {
		a.IntelRdt = b.IntelRdt
	}
	return a
}

// translateEdits turns CDI container edits into what a Docker host config
// takes: device mappings (a node's host path, or its path, to its path,
// with its permissions or rwm), bind mounts, environment and additional
// groups. What the Docker API cannot carry is refused with
// ErrCDIUnsupported rather than dropped.
func translateEdits(e specs.ContainerEdits) (gpuPlan, error) {
	var p gpuPlan
	switch {
	case len(e.Hooks) > 0:
		return p, fmt.Errorf("%w: %d OCI hook(s) (%s)", ErrCDIUnsupported, len(e.Hooks), e.Hooks[0].HookName)
	case len(e.NetDevices) > 0:
		return p, fmt.Errorf("%w: network devices", ErrCDIUnsupported)
	case e.IntelRdt != nil:
		return p, fmt.Errorf("%w: Intel RDT", ErrCDIUnsupported)
	}
	p.Env = slices.Clone(e.Env)
	p.GIDs = slices.Clone(e.AdditionalGIDs)
	for _, n := range e.DeviceNodes {
		host := n.HostPath
		if host == "" {
			host = n.Path
		}
		perms := n.Permissions
		if perms == "" {
			perms = "rwm"
		}
		p.Devices = append(p.Devices, container.DeviceMapping{PathOnHost: host, PathInContainer: n.Path, CgroupPermissions: perms})
	}
	for _, m := range e.Mounts {
		if m.Type != "" && m.Type != "bind" {
			return p, fmt.Errorf("%w: %s mount at %s", ErrCDIUnsupported, m.Type, m.ContainerPath)
		}
		p.Mounts = append(p.Mounts, mount.Mount{
			Type:     mount.TypeBind,
			Source:   m.HostPath,
			Target:   m.ContainerPath,
			ReadOnly: slices.Contains(m.Options, "ro"),
		})
	}
	return p, nil
}

// planGPUs decides how the task's devices reach the container: by name
// when the daemon resolves CDI names from dir itself, else through the
// spec's edits read here.
func planGPUs(t executor.Task, daemonCDI bool) (gpuPlan, error) {
	names := cdiNames(t)
	if len(names) == 0 {
		return gpuPlan{}, nil
	}
	if daemonCDI {
		return gpuPlan{Native: true, Names: names}, nil
	}
	edits, err := resolveEdits([]string{cdiDir(t)}, names)
	if err != nil {
		return gpuPlan{}, err
	}
	p, err := translateEdits(edits)
	p.Names = names
	return p, err
}

// apply puts the plan into a host config: CDI device requests, or the
// translated devices, mounts and groups.
func (p gpuPlan) apply(hc *container.HostConfig) {
	if p.Native {
		hc.DeviceRequests = append(hc.DeviceRequests, container.DeviceRequest{Driver: "cdi", DeviceIDs: p.Names})
		return
	}
	hc.Devices = append(hc.Devices, p.Devices...)
	hc.Mounts = append(hc.Mounts, p.Mounts...)
	for _, g := range p.GIDs {
		hc.GroupAdd = append(hc.GroupAdd, fmt.Sprint(g))
	}
}
