package main

import (
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/agent/fabric"
)

// ncclFlags are the agent's flags for the NCCL hints its GPU tasks get
// (agent/fabric, docs/gpus.md "NCCL hints").
type ncclFlags struct {
	enabled     bool
	socketIf    string
	extra       []string
	fabricSysfs string
}

func (n *ncclFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&n.enabled, "nccl-hints", false, "give tasks that hold GPUs NCCL_IB_HCA (this host's RDMA ports that are up, those on the GPUs' NUMA nodes first) or NCCL_IB_DISABLE=1 when none is up; a job's own env wins")
	fs.StringVar(&n.socketIf, "nccl-socket-ifname", "", "with --nccl-hints: NCCL_SOCKET_IFNAME for GPU tasks (e.g. eth0 or ^lo,docker)")
	fs.StringArrayVar(&n.extra, "nccl-env", nil, "with --nccl-hints: an NCCL_*=VALUE variable every GPU task gets (e.g. NCCL_IB_GID_INDEX=3 for RoCE); repeatable")
	fs.StringVar(&n.fabricSysfs, "fabric-sysfs", fabric.DefaultSysfs, "where the host's RDMA adapters are listed; adapters with a port up add the capabilities infiniband or roce")
}

// hints reads the flags into the agent's NCCL hints.
func (n *ncclFlags) hints() (fabric.Hints, error) {
	extra, err := fabric.ParseExtra(n.extra)
	if err != nil {
		return fabric.Hints{}, usagef("--nccl-env: %v", err)
	}
	if !n.enabled && (n.socketIf != "" || len(extra) > 0) {
		return fabric.Hints{}, usagef("--nccl-socket-ifname and --nccl-env take effect only with --nccl-hints")
	}
	return fabric.Hints{Enabled: n.enabled, SocketIfname: n.socketIf, Extra: extra}, nil
}
