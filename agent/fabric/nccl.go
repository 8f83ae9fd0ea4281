package fabric

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Hints is what the operator enables of the NCCL variables the agent
// gives tasks that hold GPUs.
type Hints struct {
	// Enabled turns the hints on; without it tasks get none.
	Enabled bool
	// SocketIfname, when set, is NCCL_SOCKET_IFNAME: the interfaces
	// NCCL's bootstrap and socket transport use.
	SocketIfname string
	// Extra are NCCL_* variables the operator sets for every such task
	// (e.g. NCCL_IB_GID_INDEX for RoCE), given as they are.
	Extra map[string]string
}

// ErrNotNCCLVariable refuses an extra hint that is not an NCCL_* variable.
var ErrNotNCCLVariable = errors.New("fabric: an NCCL hint must name an NCCL_* variable")

// ParseExtra reads KEY=VALUE pairs into Hints.Extra.
func ParseExtra(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !strings.HasPrefix(k, "NCCL_") || len(k) == len("NCCL_") || strings.ContainsAny(k, " \t\n\x00") || strings.ContainsRune(v, 0) {
			return nil, fmt.Errorf("%w: %q", ErrNotNCCLVariable, k)
		}
		out[k] = v
	}
	return out, nil
}

// Env is the NCCL variables a task whose GPUs hang off gpuNUMA (-1:
// unknown) gets on a host with adapters:
//
//   - NCCL_IB_HCA lists the adapter ports that are up, exactly ("=" in
//     NCCL's syntax), those on the GPUs' NUMA nodes first (NCCL weighs
//     them by PCI distance anyway; the order only breaks ties);
//   - NCCL_IB_DISABLE=1 when no adapter has a port up, so NCCL does not
//     probe for one and falls back to sockets at once;
//   - NCCL_SOCKET_IFNAME and the operator's extra variables as set.
//
// Disabled hints give nothing.
func (h Hints) Env(adapters []Adapter, gpuNUMA []int) map[string]string {
	if !h.Enabled {
		return nil
	}
	near := map[int]bool{}
	for _, n := range gpuNUMA {
		if n >= 0 {
			near[n] = true
		}
	}
	var nearPorts, farPorts []string
	for _, a := range adapters {
		for _, p := range a.ActivePorts() {
			name := a.Name + ":" + strconv.Itoa(p.Num)
			if near[a.NUMANode] {
				nearPorts = append(nearPorts, name)
			} else {
				farPorts = append(farPorts, name)
			}
		}
	}
	env := map[string]string{}
	if ports := slices.Concat(nearPorts, farPorts); len(ports) > 0 {
		env["NCCL_IB_HCA"] = "=" + strings.Join(ports, ",")
	} else {
		env["NCCL_IB_DISABLE"] = "1"
	}
	if h.SocketIfname != "" {
		env["NCCL_SOCKET_IFNAME"] = h.SocketIfname
	}
	maps.Copy(env, h.Extra)
	return env
}
