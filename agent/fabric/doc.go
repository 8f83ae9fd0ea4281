// Package fabric finds what a host offers NCCL beyond its GPUs: its RDMA
// adapters (InfiniBand HCAs and RoCE NICs), with the NUMA node each
// hangs off and the state of each port, as the kernel shows them under
// /sys/class/infiniband. The agent advertises what it found as
// capabilities and, where the operator enables it, gives each task the
// NCCL_* variables that point NCCL at the adapters nearest its GPUs.
//
// Nothing here loads a verbs library: sysfs is enough to name the
// adapters, and it is readable without privileges.
package fabric
