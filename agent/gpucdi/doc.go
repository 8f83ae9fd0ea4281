// Package gpucdi builds and writes the Container Device Interface (CDI)
// spec through which the agent's GPUs reach containers: one spec of kind
// gpulayer.io/gpu with a device per whole GPU and per MIG device (named
// by UUID) and per running GPU share (named by ShareName), generated from
// the agent's NVML inventory. A CDI consumer (Docker 25 or later with CDI
// enabled, containerd, Podman, or the container executor itself on an
// older Docker) reads it from the agent's --cdi-dir; docs/containers.md
// says how.
package gpucdi
