package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// maxGPUsPerTask is the coordinator's bound on resources.gpus (httpapi's
// maxGPUs): the CLI refuses what the coordinator would, before sending.
const maxGPUsPerTask = 64

// resourceFlags are `job submit`'s GPU flags: --gpus, --gpu-model,
// --gpu-memory, --compute-capability, --mig-profile and --gpu-sharing.
type resourceFlags struct {
	gpus                             int
	model, memory, computeCapability string
	migProfile                       string
	sharing                          string
	// taskMemory and cpus cap each task (its cgroup, on the agent).
	taskMemory string
	cpus       float64
}

// resources builds the job's resources, nil when no flag asks for
// anything. The model, memory and compute-capability terms constrain the
// GPUs a task is given, so without --gpus they have no effect: the
// coordinator takes them and its matcher ignores them; warn says so.
func (f resourceFlags) resources(warn io.Writer) (*api.Resources, error) {
	if f.gpus < 0 || f.gpus > maxGPUsPerTask {
		return nil, usagef("--gpus %d: give a number of GPUs per task from 0 to %d", f.gpus, maxGPUsPerTask)
	}
	r := api.Resources{GPUs: f.gpus}
	if f.model != "" {
		if strings.TrimSpace(f.model) == "" {
			return nil, usagef("--gpu-model is blank: give part of the GPU's name, as `gpulayer worker status` shows it (h100, \"A100-SXM4-80GB\")")
		}
		if len(f.model) > api.MaxDeviceNameBytes {
			return nil, usagef("--gpu-model: %d bytes, at most %d", len(f.model), api.MaxDeviceNameBytes)
		}
		r.GPUModel = f.model
	}
	if f.memory != "" {
		mib, err := parseGPUMemory(f.memory)
		if err != nil {
			return nil, err
		}
		r.GPUMemoryMiB = mib
	}
	if f.migProfile != "" {
		if !api.ValidMIGProfile(f.migProfile) {
			return nil, usagef("--mig-profile %q: give a MIG profile as NVIDIA names it (1g.10gb, 3g.40gb, 1c.3g.40gb)", f.migProfile)
		}
		if r.GPUs == 0 {
			return nil, usagef("--mig-profile needs --gpus: the number of MIG devices of that profile each task gets")
		}
		r.MIGProfile = f.migProfile
	}
	if f.sharing != "" {
		switch {
		case !api.ValidGPUSharing(f.sharing):
			return nil, usagef("--gpu-sharing %q: give %s or %s", f.sharing, api.SharingEnforced, api.SharingUnenforced)
		case r.GPUs != 1 || r.GPUMemoryMiB == 0:
			return nil, usagef("--gpu-sharing needs --gpus 1 and --gpu-memory: the task's share of one GPU's memory")
		case r.MIGProfile != "":
			return nil, usagef("--gpu-sharing shares whole GPUs, not MIG devices (--mig-profile)")
		}
		r.GPUSharing = f.sharing
	}
	if f.computeCapability != "" {
		cc, err := parseComputeCapability(f.computeCapability)
		if err != nil {
			return nil, err
		}
		r.ComputeCapability = cc
	}
	if f.taskMemory != "" {
		mib, err := parseMemory("--memory", f.taskMemory)
		if err != nil {
			return nil, err
		}
		if mib == 0 || mib > api.MaxTaskMemoryMiB {
			return nil, usagef("--memory %q: give from 1 MiB to %d MiB (16TiB)", f.taskMemory, api.MaxTaskMemoryMiB)
		}
		r.MemoryMiB = int64(mib)
	}
	if f.cpus != 0 {
		if !(f.cpus > 0 && f.cpus <= api.MaxTaskCPUs) {
			return nil, usagef("--cpus %v: give a number of CPUs above 0 and at most %d (fractions allowed: 0.5)", f.cpus, api.MaxTaskCPUs)
		}
		r.CPUs = f.cpus
	}
	if r == (api.Resources{}) {
		return nil, nil
	}
	if r.GPUs == 0 && warn != nil && (r.GPUModel != "" || r.GPUMemoryMiB != 0 || r.ComputeCapability != "") {
		fmt.Fprintln(warn, "gpulayer: warning: --gpu-model, --gpu-memory and --compute-capability constrain the GPUs a task is given; without --gpus the tasks get none, so they have no effect")
	}
	return &r, nil
}

// memoryUnits are the units --gpu-memory takes, each in MiB. All are
// binary (a G is a GiB), as NVML and nvidia-smi count GPU memory.
var memoryUnits = map[string]uint64{
	"": 1, "m": 1, "mi": 1, "mib": 1,
	"g": 1 << 10, "gi": 1 << 10, "gib": 1 << 10,
	"t": 1 << 20, "ti": 1 << 20, "tib": 1 << 20,
}

var memoryPattern = regexp.MustCompile(`^([0-9]+)\s*([A-Za-z]*)$`)

// parseGPUMemory reads --gpu-memory: MiB as a plain whole number (40960),
// or a whole number with a binary unit, M/MiB, G/GiB or T/TiB, any case
// (40GiB, 80G, 24576MiB). MB, GB and TB are refused rather than guessed
// at: they mean powers of ten to some and of two to others.
func parseGPUMemory(s string) (uint64, error) { return parseMemory("--gpu-memory", s) }

// parseMemory reads a memory size given to flag, as parseGPUMemory.
func parseMemory(flag, s string) (uint64, error) {
	const hint = "give MiB as a whole number (40960) or a whole number of M/MiB, G/GiB or T/TiB (80G, 40GiB, 24576MiB)"
	m := memoryPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, usagef("%s %q: %s", flag, s, hint)
	}
	unit := strings.ToLower(m[2])
	per, ok := memoryUnits[unit]
	if !ok {
		if unit == "mb" || unit == "gb" || unit == "tb" {
			return 0, usagef("%s %q: say %siB (binary, as nvidia-smi counts) or give MiB", flag, s, strings.ToUpper(unit[:1]))
		}
		return 0, usagef("%s %q: unknown unit %q; %s", flag, s, m[2], hint)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil || n > math.MaxUint64/per {
		return 0, usagef("%s %q is too large", flag, s)
	}
	return n * per, nil
}

var computeCapabilityPattern = regexp.MustCompile(`^([0-9]{1,3})\.([0-9]{1,3})$`)

// parseComputeCapability reads --compute-capability, MAJOR.MINOR (8.0,
// 9.0, 10.0), and writes it as the agent reports a device's (NVML's
// major and minor as "%d.%d"), so that 09.0 is 9.0.
func parseComputeCapability(s string) (string, error) {
	m := computeCapabilityPattern.FindStringSubmatch(s)
	if m == nil {
		return "", usagef("--compute-capability %q: give MAJOR.MINOR, as nvidia-smi --query-gpu=compute_cap shows it (8.0, 8.6, 9.0)", s)
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return fmt.Sprintf("%d.%d", major, minor), nil
}

var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// agentEnv names the variables the agent sets in every task's
// environment (agent/runner's taskEnv), over anything the job's env says:
// given with --env they would be dropped without a word, so they are
// refused. All of GPULAYER_* is the agent's as well.
var agentEnv = map[string]string{
	"CUDA_VISIBLE_DEVICES":   "the task's GPUs",
	"NVIDIA_VISIBLE_DEVICES": "the task's GPUs",
	"HOME":                   "the task's directory",
	"TMPDIR":                 "tmp in the task's directory",
	"USER":                   "the user the task runs as",
	"LOGNAME":                "the user the task runs as",
}

// parseEnv reads the --env KEY=VALUE flags into the exec config's env:
// nil for none; a usage error for a malformed entry, a name that is not a
// shell variable name, a name the agent sets itself, a name given twice,
// or more or bigger than the coordinator takes (api.MaxEnv and its
// kin). A gang job's tasks are also given the gang's variables
// (gangEnv), which the job cannot set either.
func parseEnv(list []string, gang bool) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if len(list) > api.MaxEnv {
		return nil, usagef("--env given %d times, at most %d", len(list), api.MaxEnv)
	}
	env := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return nil, usagef("--env %q: give KEY=VALUE", kv)
		case !envNamePattern.MatchString(k):
			return nil, usagef("--env %q: %q is not a variable name (letters, digits and _, not starting with a digit)", kv, k)
		case len(k) > api.MaxEnvKeyBytes:
			return nil, usagef("--env: a name of %d bytes, at most %d", len(k), api.MaxEnvKeyBytes)
		case len(v) > api.MaxEnvValueBytes:
			return nil, usagef("--env %s: the value is %d bytes, at most %d", k, len(v), api.MaxEnvValueBytes)
		case strings.HasPrefix(k, "GPULAYER_"):
			return nil, usagef("--env %s: GPULAYER_* variables are the agent's (task and job ids, the task's user); choose another name", k)
		case agentEnv[k] != "":
			return nil, usagef("--env %s: the agent sets it for every task (%s), over the job's env", k, agentEnv[k])
		case gang && (gangEnv[k] || strings.HasPrefix(k, "PET_")):
			return nil, usagef("--env %s: the agent sets it for every task of a gang, from the rendezvous", k)
		}
		if _, dup := env[k]; dup {
			return nil, usagef("--env %s given twice", k)
		}
		env[k] = v
	}
	return env, nil
}

// gangEnv names the variables the agent gives a gang's tasks besides the
// PET_* ones (agent/runner/gang.go).
var gangEnv = map[string]bool{
	"MASTER_ADDR": true, "MASTER_PORT": true, "WORLD_SIZE": true, "RANK": true,
	"NODE_RANK": true, "GROUP_RANK": true, "LOCAL_RANK": true, "LOCAL_WORLD_SIZE": true,
}
