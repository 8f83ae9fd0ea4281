//go:build cgo && linux

package nvml

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Repartitioning a GPU through NVML, as nvidia-smi mig does: the layout
// is planned first (each profile resolved among the GPU's GPU instance
// profiles, and given a placement among NVML's possible ones that no
// other takes), so that a layout the GPU cannot take leaves it as it was.
// Then MIG mode is turned on if it is off, every compute and GPU
// instance is destroyed, and each planned GPU instance is created at its
// placement with one compute instance spanning it: each is one MIG
// device. An empty layout destroys the instances and turns MIG mode off.
//
// Turning MIG mode on or off may need a GPU reset on some boards (NVML
// answers the activation with an error): that is reported, not done.

// planned is one GPU instance to create.
type planned struct {
	name      string
	profile   gonvml.GpuInstanceProfileInfo
	placement gonvml.GpuInstancePlacement
}

func repartition(ctx context.Context, lib gonvml.Interface, uuid string, layout []string) error {
	dev, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != gonvml.SUCCESS {
		return fmt.Errorf("%w: GPU %s: %w", ErrRepartition, uuid, queryError("handle", ret))
	}
	mode, _, ret := dev.GetMigMode()
	if ret != gonvml.SUCCESS {
		return fmt.Errorf("%w: GPU %s has no MIG mode: %s", ErrMIGLayout, uuid, describe(ret))
	}
	if len(layout) == 0 {
		if err := destroyInstances(dev); err != nil {
			return err
		}
		return setMIGMode(dev, gonvml.DEVICE_MIG_DISABLE)
	}
	if mode != gonvml.DEVICE_MIG_ENABLE {
		if err := setMIGMode(dev, gonvml.DEVICE_MIG_ENABLE); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	plan, err := planLayout(dev, layout)
	if err != nil {
		return err
	}
	if err := destroyInstances(dev); err != nil {
		return err
	}
	for _, p := range plan {
		gi, ret := dev.CreateGpuInstanceWithPlacement(&p.profile, &p.placement)
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("%w: creating a %s GPU instance at slice %d: %s", ErrRepartition, p.name, p.placement.Start, describe(ret))
		}
		ci, err := wholeComputeProfile(gi, p.profile.SliceCount)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrRepartition, p.name, err)
		}
		if _, ret := gi.CreateComputeInstance(&ci); ret != gonvml.SUCCESS {
			return fmt.Errorf("%w: creating the compute instance of %s: %s", ErrRepartition, p.name, describe(ret))
		}
	}
	return nil
}

// setMIGMode turns MIG mode on or off; an activation NVML refuses (a
// reset needed, processes on the GPU) is an error.
func setMIGMode(dev gonvml.Device, mode int) error {
	word := map[int]string{gonvml.DEVICE_MIG_ENABLE: "on", gonvml.DEVICE_MIG_DISABLE: "off"}[mode]
	activation, ret := dev.SetMigMode(mode)
	if ret != gonvml.SUCCESS {
		return fmt.Errorf("%w: turning MIG mode %s: %s", ErrRepartition, word, describe(ret))
	}
	if activation != gonvml.SUCCESS {
		return fmt.Errorf("%w: MIG mode %s awaits its activation: %s", ErrRepartition, word, describe(activation))
	}
	return nil
}

// giProfiles are the GPU's GPU instance profiles by name.
func giProfiles(dev gonvml.Device) map[string]gonvml.GpuInstanceProfileInfo {
	out := map[string]gonvml.GpuInstanceProfileInfo{}
	for id := range gonvml.GPU_INSTANCE_PROFILE_COUNT {
		p, ret := dev.GetGpuInstanceProfileInfo(id)
		if ret != gonvml.SUCCESS || p.InstanceCount == 0 {
			continue
		}
		if _, dup := out[profileName(p)]; !dup {
			out[profileName(p)] = p
		}
	}
	return out
}

// planLayout resolves layout's profiles and places them, the largest
// first, each at the first of NVML's possible placements that overlaps
// none placed before.
func planLayout(dev gonvml.Device, layout []string) ([]planned, error) {
	profiles := giProfiles(dev)
	plan := make([]planned, 0, len(layout))
	for _, name := range layout {
		p, ok := profiles[name]
		if !ok {
			return nil, fmt.Errorf("%w: no profile %q (it has %v)", ErrMIGLayout, name, slices.Sorted(maps.Keys(profiles)))
		}
		plan = append(plan, planned{name: name, profile: p})
	}
	slices.SortStableFunc(plan, func(a, b planned) int { return cmp.Compare(b.profile.SliceCount, a.profile.SliceCount) })
	var taken []gonvml.GpuInstancePlacement
	for i := range plan {
		possible, ret := dev.GetGpuInstancePossiblePlacements(&plan[i].profile)
		if ret != gonvml.SUCCESS {
			return nil, fmt.Errorf("%w: placements of %s: %s", ErrRepartition, plan[i].name, describe(ret))
		}
		j := slices.IndexFunc(possible, func(c gonvml.GpuInstancePlacement) bool {
			return !slices.ContainsFunc(taken, func(t gonvml.GpuInstancePlacement) bool {
				return c.Start < t.Start+t.Size && t.Start < c.Start+c.Size
			})
		})
		if j < 0 {
			return nil, fmt.Errorf("%w: no room left for %s beside the larger ones", ErrMIGLayout, plan[i].name)
		}
		plan[i].placement = possible[j]
		taken = append(taken, possible[j])
	}
	return plan, nil
}

// wholeComputeProfile is the compute instance profile of gi that spans
// all its slices.
func wholeComputeProfile(gi gonvml.GpuInstance, slicesOf uint32) (gonvml.ComputeInstanceProfileInfo, error) {
	for id := range gonvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		p, ret := gi.GetComputeInstanceProfileInfo(id, gonvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret == gonvml.SUCCESS && p.SliceCount == slicesOf {
			return p, nil
		}
	}
	return gonvml.ComputeInstanceProfileInfo{}, fmt.Errorf("no compute instance profile of %d slices", slicesOf)
}

// destroyInstances destroys every compute instance, then every GPU
// instance, of dev.
func destroyInstances(dev gonvml.Device) error {
	for id := range gonvml.GPU_INSTANCE_PROFILE_COUNT {
		p, ret := dev.GetGpuInstanceProfileInfo(id)
		if ret != gonvml.SUCCESS {
			continue
		}
		gis, ret := dev.GetGpuInstances(&p)
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("%w: listing the %s GPU instances: %s", ErrRepartition, profileName(p), describe(ret))
		}
		for _, gi := range gis {
			if err := destroyComputeInstances(gi); err != nil {
				return err
			}
			if ret := gi.Destroy(); ret != gonvml.SUCCESS {
				return fmt.Errorf("%w: destroying a %s GPU instance: %s", ErrRepartition, profileName(p), describe(ret))
			}
		}
	}
	return nil
}

func destroyComputeInstances(gi gonvml.GpuInstance) error {
	for id := range gonvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		p, ret := gi.GetComputeInstanceProfileInfo(id, gonvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if ret != gonvml.SUCCESS {
			continue
		}
		cis, ret := gi.GetComputeInstances(&p)
		if ret != gonvml.SUCCESS {
			return fmt.Errorf("%w: listing compute instances: %s", ErrRepartition, describe(ret))
		}
		for _, ci := range cis {
			if ret := ci.Destroy(); ret != gonvml.SUCCESS {
				return fmt.Errorf("%w: destroying a compute instance: %s", ErrRepartition, describe(ret))
			}
		}
	}
	return nil
}
