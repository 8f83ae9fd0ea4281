//go:build cgo && linux

package nvmltest

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// Repartitioning. go-nvml's mock servers create and destroy GPU and
// compute instances but check nothing: an instance is created with MIG
// mode off, two share the same slices, a GPU instance with compute
// instances is destroyed. The fixture answers those calls as NVML does
// (the NVML API reference, "Multi Instance GPU Management"):
//
//   - SetMigMode with GPU instances left answers nvml.ERROR_IN_USE;
//   - with MIG mode off, GetGpuInstanceProfileInfo,
//     GetGpuInstancePossiblePlacements and the creating calls answer
//     nvml.ERROR_NOT_SUPPORTED;
//   - CreateGpuInstance takes the first possible placement whose memory
//     slices are free, and answers nvml.ERROR_INSUFFICIENT_RESOURCES when
//     none is, or when the profile's instance count is reached;
//     CreateGpuInstanceWithPlacement answers nvml.ERROR_INVALID_ARGUMENT
//     for a placement the profile does not have and
//     nvml.ERROR_INSUFFICIENT_RESOURCES for one that overlaps;
//   - a GPU instance's CreateComputeInstance answers
//     nvml.ERROR_INSUFFICIENT_RESOURCES past the instance's slices, and its
//     Destroy answers nvml.ERROR_IN_USE while compute instances are left.
//
// Each compute instance then is a MIG device of its GPU
// (GetMigDeviceHandleByIndex, in GPU then compute instance id order),
// named "<GPU name> MIG <profile>" with a MIG- UUID of its own, as a real
// GPU's are. A GPU given MIG devices with SetMIGDevices keeps those
// instead and is not repartitioned: its calls go to the mock server.

// migManageAnswers are GPU i's answers about MIG mode and GPU instances.
func (m *Machine) migManageAnswers(i int) map[string]any {
	d := m.devs[i]
	static := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		_, ok := m.mig[i]
		return ok
	}
	off := func() bool {
		d.RLock()
		defer d.RUnlock()
		return d.MigMode != nvml.DEVICE_MIG_ENABLE
	}
	return map[string]any{
		"SetMigMode": func(mode int) (nvml.Return, nvml.Return) {
			switch {
			case static():
				return unconfigured, unconfigured
			case mode != nvml.DEVICE_MIG_ENABLE && mode != nvml.DEVICE_MIG_DISABLE:
				return nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_INVALID_ARGUMENT
			case mode == nvml.DEVICE_MIG_DISABLE && m.gpuInstanceCount(d) > 0:
				return nvml.ERROR_IN_USE, nvml.ERROR_IN_USE
			}
			return unconfigured, unconfigured
		},
		"GetGpuInstanceProfileInfo": func(int) (nvml.GpuInstanceProfileInfo, nvml.Return) {
			if !static() && off() {
				return nvml.GpuInstanceProfileInfo{}, nvml.ERROR_NOT_SUPPORTED
			}
			return nvml.GpuInstanceProfileInfo{}, unconfigured
		},
		"GetGpuInstancePossiblePlacements": func(*nvml.GpuInstanceProfileInfo) ([]nvml.GpuInstancePlacement, nvml.Return) {
			if !static() && off() {
				return nil, nvml.ERROR_NOT_SUPPORTED
			}
			return nil, unconfigured
		},
		"CreateGpuInstance": func(info *nvml.GpuInstanceProfileInfo) (nvml.GpuInstance, nvml.Return) {
			if static() {
				return nil, unconfigured
			}
			return m.createGpuInstance(d, info, nil)
		},
		"CreateGpuInstanceWithPlacement": func(info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
			if static() {
				return nil, unconfigured
			}
			if p == nil {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return m.createGpuInstance(d, info, p)
		},
	}
}

func (m *Machine) gpuInstanceCount(d *server.Device) int {
	d.RLock()
	defer d.RUnlock()
	return len(d.GpuInstances)
}

// createGpuInstance creates a GPU instance of profile info on d, at p or
// at the first free placement, as the mock server does but with NVML's
// checks. m.migMu is held exclusively (a creating call).
func (m *Machine) createGpuInstance(d *server.Device, info *nvml.GpuInstanceProfileInfo, p *nvml.GpuInstancePlacement) (nvml.GpuInstance, nvml.Return) {
	if info == nil {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	d.Lock()
	defer d.Unlock()
	if d.MigMode != nvml.DEVICE_MIG_ENABLE {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	prof, ok := d.Config.MIGProfiles.GpuInstanceProfiles[int(info.Id)]
	if !ok {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	same := 0
	var used []nvml.GpuInstancePlacement
	for gi := range d.GpuInstances {
		used = append(used, gi.Info.Placement)
		if gi.Info.ProfileId == prof.Id {
			same++
		}
	}
	if same >= int(prof.InstanceCount) {
		return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
	}
	possible := d.Config.MIGProfiles.GpuInstancePlacements[int(prof.Id)]
	free := func(c nvml.GpuInstancePlacement) bool {
		return !slices.ContainsFunc(used, func(u nvml.GpuInstancePlacement) bool {
			return c.Start < u.Start+u.Size && u.Start < c.Start+c.Size
		})
	}
	var at nvml.GpuInstancePlacement
	switch {
	case p != nil && !slices.Contains(possible, *p):
		return nil, nvml.ERROR_INVALID_ARGUMENT
	case p != nil && !free(*p):
		return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
	case p != nil:
		at = *p
	default:
		i := slices.IndexFunc(possible, free)
		if i < 0 {
			return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		at = possible[i]
	}
	gi := server.NewGpuInstanceFromInfo(nvml.GpuInstanceInfo{Device: d, Id: d.GpuInstanceCounter, ProfileId: prof.Id, Placement: at}, d.Config.MIGProfiles)
	d.GpuInstanceCounter++
	d.GpuInstances[gi] = struct{}{}
	return gi, nvml.SUCCESS
}

// gpuInstanceAnswers are the NVML checks on a GPU instance the fixture
// adopts (mig.go): compute instances within its slices, no destroying it
// under them.
func gpuInstanceAnswers(gi *server.GpuInstance) map[string]any {
	slicesOf := func(info nvml.ComputeInstanceInfo) uint32 {
		p, ok := gi.MIGProfiles.ComputeInstanceProfiles[int(gi.Info.ProfileId)][int(info.ProfileId)]
		if !ok {
			return 0
		}
		return p.SliceCount
	}
	return map[string]any{
		"CreateComputeInstance": func(info *nvml.ComputeInstanceProfileInfo) (nvml.ComputeInstance, nvml.Return) {
			if info == nil {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			giProf := gi.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
			gi.RLock()
			used := uint32(0)
			for ci := range gi.ComputeInstances {
				used += slicesOf(ci.Info)
			}
			gi.RUnlock()
			if used+info.SliceCount > giProf.SliceCount {
				return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
			}
			return nil, unconfigured
		},
		"Destroy": func() nvml.Return {
			gi.RLock()
			defer gi.RUnlock()
			if len(gi.ComputeInstances) > 0 {
				return nvml.ERROR_IN_USE
			}
			return unconfigured
		},
	}
}

// createdMIGDevices are GPU i's compute instances as MIG device handles,
// in GPU then compute instance id order, and whether it is in MIG mode.
func (m *Machine) createdMIGDevices(i int, gpuName string) ([]nvml.Device, bool) {
	d := m.devs[i]
	type inst struct {
		gi  *server.GpuInstance
		ci  *server.ComputeInstance
		gid uint32
	}
	d.RLock()
	on := d.MigMode == nvml.DEVICE_MIG_ENABLE
	var all []inst
	for gi := range d.GpuInstances {
		gi.RLock()
		for ci := range gi.ComputeInstances {
			all = append(all, inst{gi, ci, gi.Info.Id})
		}
		gi.RUnlock()
	}
	d.RUnlock()
	slices.SortFunc(all, func(a, b inst) int { return cmp.Or(cmp.Compare(a.gid, b.gid), cmp.Compare(a.ci.Info.Id, b.ci.Info.Id)) })
	out := make([]nvml.Device, 0, len(all))
	for _, x := range all {
		out = append(out, m.migDeviceOf(i, gpuName, x.gi, x.ci))
	}
	return out, on
}

// migDeviceOf is the MIG device handle of compute instance ci, made once.
func (m *Machine) migDeviceOf(i int, gpuName string, gi *server.GpuInstance, ci *server.ComputeInstance) nvml.Device {
	m.mu.Lock()
	h, ok := m.created[ci]
	m.mu.Unlock()
	if ok {
		return h
	}
	prof := gi.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d/%d", m.devs[i].UUID, gi.Info.Id, ci.Info.Id))
	h = m.migHandle(i, gpuName, MIGDevice{
		UUID:      fmt.Sprintf("MIG-%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]),
		Profile:   ProfileName(prof),
		MemoryMiB: prof.MemorySizeMB,
		// A GPU instance's id as NVML numbers them from 1.
		GPUInstance:     int(gi.Info.Id) + 1,
		ComputeInstance: int(ci.Info.Id),
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.created[ci]; ok {
		return prev
	}
	if m.created == nil {
		m.created = map[*server.ComputeInstance]nvml.Device{}
	}
	m.created[ci] = h
	return h
}

// ProfileName is NVIDIA's name of a GPU instance profile: its slices and
// its memory rounded up to whole GiB, "+me" for the media-extension
// variants ("1g.10gb", "1g.10gb+me").
func ProfileName(p nvml.GpuInstanceProfileInfo) string {
	name := fmt.Sprintf("%dg.%dgb", p.SliceCount, (p.MemorySizeMB+1023)/1024)
	if p.Id == nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1 || p.Id == nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1 {
		name += "+me"
	}
	return name
}
