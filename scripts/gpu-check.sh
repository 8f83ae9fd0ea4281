#!/usr/bin/env bash
# gpu-check.sh: on a machine with NVIDIA GPUs and a driver, check that the
# inventory GpuLayer reads through NVML (agent/devices, via the gpuinventory
# program) matches nvidia-smi, and that every GPU is healthy.
#
# Usage: scripts/gpu-check.sh
#   GPUINVENTORY=/path/to/gpuinventory  use a prebuilt binary (build it with
#       CGO_ENABLED=1 go build ./agent/devices/cmd/gpuinventory) instead of
#       building one; the machine then needs no Go toolchain.
#   RUN_TESTS=1  also run go test -race ./agent/devices/... here, so the real
#       NVML path of the tests sees real GPUs.
#   TASK_CHECK=0  skip the check that a one-GPU task sees exactly its GPU
#       (it builds gpulayer and runs gpulayer dev on this machine).
#
# The inventory JSON it prints includes each GPU's topology (links,
# numa_node), to compare by eye with nvidia-smi topo -m, which it prints
# too. Nothing here changes a GPU's settings (MIG mode, clocks, resets).
#
# Exit status: 0 when they match; 1 on a difference, an unhealthy GPU or a
# failure of gpuinventory; 2 when this is not a GPU machine or a tool is
# missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say() { echo "gpu-check: $*" >&2; }

if ! command -v nvidia-smi >/dev/null 2>&1; then
	say "nvidia-smi not found; run this on a machine with an NVIDIA driver"
	exit 2
fi

bin=${GPUINVENTORY:-}
if [[ -z $bin ]]; then
	if ! command -v go >/dev/null 2>&1; then
		say "no go toolchain; set GPUINVENTORY to a prebuilt gpuinventory binary"
		exit 2
	fi
	say "building gpuinventory (cgo)"
	(cd "$root" && CGO_ENABLED=1 go build -o "$work/gpuinventory" ./agent/devices/cmd/gpuinventory)
	bin=$work/gpuinventory
fi

# Strip trailing blanks only; any other difference is a real one.
nvidia-smi --query-gpu=uuid,name,memory.total,driver_version --format=csv,noheader,nounits |
	sed 's/[[:space:]]*$//' >"$work/nvidia-smi.csv"
if ! "$bin" >"$work/raw.csv" 2>"$work/gpuinventory.log"; then
	cat "$work/gpuinventory.log" >&2
	say "FAIL: gpuinventory failed"
	exit 1
fi
sed 's/[[:space:]]*$//' "$work/raw.csv" >"$work/gpuinventory.csv"
cat "$work/gpuinventory.log" >&2

n=$(wc -l <"$work/nvidia-smi.csv")
if [[ $n -eq 0 ]]; then
	say "nvidia-smi lists no GPUs"
	exit 2
fi

status=0
if diff -u --label nvidia-smi --label gpuinventory "$work/nvidia-smi.csv" "$work/gpuinventory.csv"; then
	say "inventory matches nvidia-smi ($n GPUs)"
else
	say "FAIL: inventory differs from nvidia-smi (diff above)"
	status=1
fi

"$bin" -json >"$work/inventory.json" 2>/dev/null
cat "$work/inventory.json"
nvidia-smi topo -m || true
if grep -q '"healthy": false' "$work/inventory.json"; then
	say "FAIL: some GPUs are flagged unhealthy (see the log above)"
	status=1
fi

# A one-GPU task sees exactly its GPU: gpulayer dev (a coordinator and an
# agent on this machine's real NVML), one task that prints what CUDA and
# nvidia-smi show it. Reads only; it changes no GPU setting.
if [[ ${TASK_CHECK:-1} == 1 ]] && command -v go >/dev/null 2>&1; then
	say "building gpulayer for the task check"
	(cd "$root" && CGO_ENABLED=1 go build -o "$work/gpulayer" ./cmd/gpulayer)
	"$work/gpulayer" dev --http-addr 127.0.0.1:0 --env-file "$work/env" --log-level warn >"$work/dev.log" 2>&1 &
	devpid=$!
	for _ in $(seq 1 300); do [[ -s $work/env ]] && break; sleep 0.2; done
	if [[ ! -s $work/env ]]; then
		cat "$work/dev.log" >&2
		say "FAIL: gpulayer dev did not come up"
		status=1
	else
		set -a
		# shellcheck disable=SC1091
		. "$work/env"
		set +a
		if ! "$work/gpulayer" job submit --gpus 1 --wait -- sh -c 'echo "CVD=$CUDA_VISIBLE_DEVICES"; nvidia-smi -L' >"$work/task.out" 2>"$work/task.err"; then
			cat "$work/task.err" >&2
			say "FAIL: the one-GPU task failed"
			status=1
		fi
		cat "$work/task.out"
		cvd=$(sed -n 's/^CVD=//p' "$work/task.out")
		seen=$(grep -c '^GPU [0-9]' "$work/task.out" || true)
		if [[ $cvd == *,* || -z $cvd ]] || [[ $seen -ne 1 ]] || ! grep -q "UUID: $cvd)" "$work/task.out"; then
			say "FAIL: the task was given '$cvd' and nvidia-smi showed it $seen GPU(s)"
			status=1
		else
			say "a one-GPU task sees exactly its GPU ($cvd)"
		fi
	fi
	kill "$devpid" 2>/dev/null || true
	wait "$devpid" 2>/dev/null || true
fi

if [[ ${RUN_TESTS:-0} == 1 ]]; then
	say "running go test -race ./agent/devices/..."
	(cd "$root" && go test -race -count=1 -v -run 'TestOpenReal' ./agent/devices/ && go test -race -count=1 ./agent/devices/...) || status=1
fi

if [[ $status -eq 0 ]]; then
	say "OK"
fi
exit "$status"
