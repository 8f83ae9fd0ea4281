package sim

import (
	"fmt"
	"math"

	"github.com/gpulayer/gpulayer/coordinator/command"
	"github.com/gpulayer/gpulayer/coordinator/state/teams"
)

// gpuMiB is each simulated GPU's memory; a 1g.10gb MIG instance has
// migMiB of it, 7 to a GPU.
const (
	gpuMiB     = 81920
	migMiB     = 10240
	migPerGPU  = 7
	migProfile = "1g.10gb"
	// sharesPerGPU bounds the tasks a worker runs: as many as its GPUs
	// could hold in shares of a tenth.
	sharesPerGPU = 10
)

// setup creates the trace's teams and workers.
func (sm *Sim) setup() error {
	for _, t := range sm.tr.Teams {
		st := command.TeamSettings{WeightCenti: centiOf(t.Weight), QuotaCentiGPUs: centiOf(t.QuotaGPUs)}
		if t.Weight == 0 {
			st.WeightCenti = teams.DefaultWeightCenti
		}
		if t.BorrowLimit != nil {
			v := centiOf(*t.BorrowLimit)
			st.BorrowLimitCenti = &v
		}
		if err := sm.apply(command.CreateTeam{Name: t.Name, Settings: st, By: "sim", Now: sm.at()}); err != nil {
			return err
		}
	}
	for _, p := range sm.tr.Fleet {
		for i := range p.Count {
			id := fmt.Sprintf("%s%04d", p.Prefix, i)
			devs := devicesOf(id, p)
			slots := (p.GPUs-p.MIG)*sharesPerGPU + p.MIG*migPerGPU
			reg := command.RegisterWorker{WorkerID: id, Credential: command.CredentialRecord{ID: "cred-" + id, Kind: "worker", Hash: "h-" + id},
				Capabilities: []string{"*"}, Executors: []string{"sim"}, Devices: devs, Now: sm.at()}
			if err := sm.apply(reg); err != nil {
				return err
			}
			if err := sm.apply(command.UpdateWorker{WorkerID: id, Executors: reg.Executors, Devices: devs, MaxTasks: slots, Now: sm.at()}); err != nil {
				return err
			}
			sm.workers = append(sm.workers, id)
			sm.fleetCenti += int64(p.GPUs) * command.CentiGPUsPerGPU
		}
	}
	return nil
}

// devicesOf is a worker's GPUs: whole ones, then those in MIG mode with
// their instances.
func devicesOf(id string, p PoolSpec) []command.Device {
	var out []command.Device
	for g := range p.GPUs {
		d := command.Device{Index: g, UUID: fmt.Sprintf("%s-g%d", id, g), Name: "NVIDIA H100 80GB HBM3", MemoryMiB: gpuMiB, Healthy: true, Sharing: command.SharingEnforced}
		if g < p.MIG {
			d.MIGEnabled, d.Sharing = true, ""
			out = append(out, d)
			for m := range migPerGPU {
				out = append(out, command.Device{Index: g, UUID: fmt.Sprintf("%s-g%d-m%d", id, g, m), Name: "NVIDIA H100 80GB HBM3 MIG " + migProfile,
					MemoryMiB: migMiB, Healthy: true, Parent: d.UUID, MIGProfile: migProfile})
			}
			continue
		}
		out = append(out, d)
	}
	return out
}

// resourcesOf is what a trace job's tasks ask for.
func resourcesOf(j JobSpec) *command.Resources {
	switch {
	case j.MIG:
		return &command.Resources{GPUs: 1, MIGProfile: migProfile}
	case j.ShareMiB > 0:
		return &command.Resources{GPUs: 1, GPUMemoryMiB: j.ShareMiB, GPUSharing: command.SharingEnforced}
	case j.GPUs > 0:
		return &command.Resources{GPUs: j.GPUs}
	}
	return nil
}

// taskCenti is what one task of j holds, in hundredths of a GPU, as the
// state counts it.
func taskCenti(j JobSpec) int64 {
	switch {
	case j.MIG:
		return ceilDiv(migMiB*command.CentiGPUsPerGPU, gpuMiB)
	case j.ShareMiB > 0:
		return min(ceilDiv(int64(j.ShareMiB)*command.CentiGPUsPerGPU, gpuMiB), command.CentiGPUsPerGPU)
	}
	return int64(j.GPUs) * command.CentiGPUsPerGPU
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func centiOf(gpus float64) int64 { return int64(math.Round(gpus * command.CentiGPUsPerGPU)) }
