// Package container is GpuLayer's built-in container executor: it runs a
// task as a Docker container through the Docker Engine API, in a sandbox
// equal to the exec executor's (the task's uid and gid, no capabilities,
// no-new-privileges, the job's memory, CPU and pids limits, no network
// unless the task is a gang member, the task directory mounted at its own
// path), with the task's GPUs brought in through the agent's CDI spec
// (agent/gpucdi): as CDI device names on a daemon that resolves them,
// or as the spec's container edits applied to the container's host
// config on one that does not (Docker before 25, API 1.41 here).
//
// Containers are labelled with the task and with the agent's task root,
// and the executor removes, before its first task, the containers of its
// agent that no live executor knows (an agent or plugin killed without
// its tasks). docs/containers.md describes it for users.
package container
