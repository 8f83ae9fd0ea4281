package gpucdi

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// ControlNodes are the driver's device files every GPU container needs
// besides its GPU's own: the control device and unified memory. Those
// present on the host go into the spec's common edits.
var ControlNodes = []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}

// Share is a running GPU share as the spec names it.
type Share struct {
	// AttemptID is the attempt holding the share; GPU the whole GPU's UUID.
	AttemptID, GPU string
	// Env is what the task is told of its share (its memory limit, and
	// the MPS pipe directory where MPS enforces it), as the exec executor
	// passes it: runner.ShareEnv.
	Env map[string]string
	// MPSPipeDir, when not empty, is bind-mounted at the same path.
	MPSPipeDir string
}

// Inventory is what the spec is generated from.
type Inventory struct {
	// Devices are the agent's GPUs and MIG devices as it reports them.
	// A device that is not healthy is left out: a container cannot be
	// given it.
	Devices []api.Device
	// Nodes maps a whole GPU's UUID to its device file (/dev/nvidia<minor>,
	// from NVML's minor number). A MIG device uses its GPU's.
	Nodes map[string]string
	// Shares are the running GPU shares.
	Shares []Share
	// Exists reports whether a device file is there; nil means os.Stat.
	// A file that is not there is left out of the spec.
	Exists func(path string) bool
}

// ErrEmpty is returned by Build when no device can be offered: CDI
// refuses a spec without devices, so none is written.
var ErrEmpty = errors.New("gpucdi: no healthy GPU to describe")

// Build generates the spec. Each device sets NVIDIA_VISIBLE_DEVICES and
// CUDA_VISIBLE_DEVICES to its UUID, as the exec executor's tasks are
// told, and carries its GPU's device file where the host has it.
func Build(inv Inventory) (*specs.Spec, error) {
	exists := inv.Exists
	if exists == nil {
		exists = func(p string) bool { _, err := os.Stat(p); return err == nil }
	}
	nodeOf := func(gpu string) []*specs.DeviceNode {
		if n, ok := inv.Nodes[gpu]; ok && exists(n) {
			return []*specs.DeviceNode{{Path: n}}
		}
		return nil
	}
	healthy := make(map[string]api.Device, len(inv.Devices))
	spec := &specs.Spec{Kind: Kind}
	for _, d := range inv.Devices {
		if !d.Healthy {
			continue
		}
		healthy[d.UUID] = d
		if d.MIGEnabled { // given out only as its MIG devices
			continue
		}
		gpu := d.UUID
		if d.Parent != "" {
			gpu = d.Parent
		}
		spec.Devices = append(spec.Devices, specs.Device{
			Name: cleanName(d.UUID),
			ContainerEdits: specs.ContainerEdits{
				Env:         visibleEnv(d.UUID, nil),
				DeviceNodes: nodeOf(gpu),
			},
		})
	}
	for _, sh := range inv.Shares {
		if _, ok := healthy[sh.GPU]; !ok {
			continue
		}
		edits := specs.ContainerEdits{Env: visibleEnv(sh.GPU, sh.Env), DeviceNodes: nodeOf(sh.GPU)}
		if sh.MPSPipeDir != "" {
			edits.Mounts = []*specs.Mount{{HostPath: sh.MPSPipeDir, ContainerPath: sh.MPSPipeDir, Type: "bind", Options: []string{"rbind", "rw"}}}
		}
		spec.Devices = append(spec.Devices, specs.Device{Name: ShareName(sh.GPU, sh.AttemptID), ContainerEdits: edits})
	}
	if len(spec.Devices) == 0 {
		return nil, ErrEmpty
	}
	for _, n := range ControlNodes {
		if exists(n) {
			spec.ContainerEdits.DeviceNodes = append(spec.ContainerEdits.DeviceNodes, &specs.DeviceNode{Path: n})
		}
	}
	v, err := specs.MinimumRequiredVersion(spec)
	if err != nil {
		return nil, fmt.Errorf("gpucdi: %w", err)
	}
	spec.Version = v
	return spec, nil
}

// visibleEnv is the environment of a device: the GPU variables naming
// uuid, then extra, sorted by name.
func visibleEnv(uuid string, extra map[string]string) []string {
	env := []string{"CUDA_VISIBLE_DEVICES=" + uuid, "NVIDIA_VISIBLE_DEVICES=" + uuid}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}
