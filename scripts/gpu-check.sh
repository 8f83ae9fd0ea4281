#!/usr/bin/env bash
# gpu-check.sh: on a machine with NVIDIA GPUs and a driver, check that the
# inventory GpuLayer reads through NVML (agent/devices, via the gpuinventory
# program) matches nvidia-smi, and that every GPU is healthy.
#
# Usage: scripts/gpu-check.sh
#   GPUINVENTORY=/path/to/gpuinventory  use a prebuilt binary (build it with
#       CGO_ENABLED=1 go build ./agent/devices/cmd/gpuinventory) instead of
#       building one; the machine then needs no Go toolchain.
#   GPULAYER=/path/to/gpulayer  likewise for the task and metrics checks.
#   REPORT_DIR=dir  copy what was read (inventory, probe, task output,
#       metrics) there, to keep as the record of the run.
#   RUN_TESTS=1  also run go test -race ./agent/devices/... here, so the real
#       NVML path of the tests sees real GPUs.
#   TASK_CHECK=0  skip the check that a one-GPU task sees exactly its GPU
#       and the metrics check (they run gpulayer dev and a second agent with
#       --metrics-addr on this machine).
#
# It runs the gangs' preflight on every GPU (gpuinventory -preflight), the
# CUDA checks included where the driver loads, and records the figures.
#
# It also records what the health watcher relies on (gpuinventory -probe:
# the event types each GPU supports, whether XID and double-bit ECC events
# register, the driver's recovery-action field) and checks that the metrics
# the agent serves read sane values beside nvidia-smi's.
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

# What the health watcher can rely on here: recorded, not judged, except
# that NVML must answer the probe at all.
if "$bin" -probe >"$work/probe.json" 2>"$work/probe.log"; then
	cat "$work/probe.json"
	say "probe: event set $(sed -n 's/^  "event_set": "\(.*\)",$/\1/p' "$work/probe.json"); per GPU: register, recovery action:"
	grep -E '"(register|recovery_action)"' "$work/probe.json" | tr -d ' ,' >&2 || true
else
	cat "$work/probe.log" >&2
	say "FAIL: gpuinventory -probe failed"
	status=1
fi

# The gang preflight on every GPU: NVML's checks and, where the CUDA driver
# and cuBLAS load, the memory pattern test, the SGEMM against the model's
# figure and the peer copies over NVLink (agent/devices/cuda). A GPU that
# fails is a failure of this check; a check skipped is recorded.
if "$bin" -preflight >"$work/preflight.json" 2>"$work/preflight.log"; then
	say "preflight passed:"
else
	say "FAIL: the preflight failed (or could not run):"
	cat "$work/preflight.log" >&2
	status=1
fi
grep -E '"(name|status|detail|took_ms)"' "$work/preflight.json" | tr -s ' ' >&2 || true

# metrics_check runs a second agent against gpulayer dev with
# --metrics-addr and checks each GPU's DCGM-named readings beside what
# nvidia-smi reads at the same time.
metrics_check() {
	local tok port=19477 body=""
	tok=$("$gl" token create --kind join --name gpu-check-metrics --json | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
	GPULAYER_JOIN_TOKEN=$tok "$gl" agent run --coordinator "$GPULAYER_ADDR" --data-dir "$work/metrics-agent" \
		--worker-id gpu-check-metrics --max-tasks 1 --task-uid-base 62000 \
		--metrics-addr "127.0.0.1:$port" --log-level warn >"$work/metrics-agent.log" 2>&1 &
	local apid=$!
	for _ in $(seq 1 150); do
		body=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' "http://127.0.0.1:$port/metrics" 2>/dev/null || true)
		grep -q '^DCGM_FI_DEV_GPU_TEMP' <<<"$body" && break
		sleep 0.2
	done
	kill "$apid" 2>/dev/null || true
	wait "$apid" 2>/dev/null || true
	printf '%s\n' "$body" >"$work/metrics.txt"
	nvidia-smi --query-gpu=uuid,temperature.gpu,memory.used,memory.total,power.draw,utilization.gpu --format=csv,noheader,nounits >"$work/metrics-smi.csv"
	grep -E '^(DCGM_|gpulayer_gpu_health|gpulayer_nvml)' "$work/metrics.txt" >&2 || true
	if ! grep -q '^DCGM_FI_DEV_GPU_TEMP' "$work/metrics.txt"; then
		cat "$work/metrics-agent.log" >&2
		say "FAIL: the agent served no GPU metrics"
		return 1
	fi
	python3 - "$work/metrics.txt" "$work/metrics-smi.csv" <<'PY'
import re, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(DCGM_FI_DEV_\w+)\{([^}]*)\} (\S+)$', line.strip())
    if m:
        uuid = re.search(r'UUID="([^"]+)"', m.group(2))
        if uuid:
            vals.setdefault(uuid.group(1), {})[m.group(1)] = float(m.group(3))
bad = 0
for row in open(sys.argv[2]):
    uuid, temp, used, total, power, util = [f.strip() for f in row.split(",")]
    got = vals.get(uuid, {})
    def check(name, ok, want):
        global bad
        v = got.get(name)
        if v is None or not ok(v):
            print(f"gpu-check: FAIL: {uuid} {name}={v}, nvidia-smi says {want}", file=sys.stderr)
            bad = 1
    check("DCGM_FI_DEV_GPU_TEMP", lambda v: abs(v - float(temp)) <= 5, temp)
    check("DCGM_FI_DEV_FB_USED", lambda v: abs(v - float(used)) <= 0.05 * float(total), used)
    check("DCGM_FI_DEV_FB_FREE", lambda v: 0 < v + got.get("DCGM_FI_DEV_FB_USED", 0) <= float(total) * 1.01, f"total {total}")
    if power not in ("[N/A]", "N/A"):
        check("DCGM_FI_DEV_POWER_USAGE", lambda v: 0 < v < 2000 and abs(v - float(power)) <= max(50, 0.5 * float(power)), power)
    check("DCGM_FI_DEV_GPU_UTIL", lambda v: 0 <= v <= 100, util)
    if got:
        print(f"gpu-check: metrics of {uuid}: " + ", ".join(f"{k[12:]}={v:g}" for k, v in sorted(got.items())), file=sys.stderr)
sys.exit(bad)
PY
}

# process_check runs a task that holds 2 GiB of GPU memory through torch
# and checks what a per-task memory watchdog reads: NVML lists the task's
# process with that memory, and /proc shows the process under the task's
# own uid. Recorded, and failed only when NVML lists nothing at all.
process_check() {
	local job pid="" used="" uid
	job=$("$gl" job submit --gpus 1 --json -- python3 -c 'import time, torch; x = torch.empty(2 << 30, dtype=torch.uint8, device="cuda"); print("holding", flush=True); time.sleep(30)' |
		sed -n 's/^  "id": "\([^"]*\)".*/\1/p' | head -1)
	for _ in $(seq 1 150); do
		"$bin" -probe >"$work/probe-hold.json" 2>/dev/null || true
		read -r pid used < <(python3 -c 'import json, sys
for g in json.load(open(sys.argv[1]))["gpus"]:
    for p in g.get("processes") or []:
        if (p["used_mib"] or 0) >= 2048:
            print(p["pid"], p["used_mib"]); sys.exit()' "$work/probe-hold.json") || true
		[[ -n $pid ]] && break
		sleep 0.2
	done
	if [[ -z $pid ]]; then
		say "FAIL: NVML listed no process holding 2 GiB while the task ran (job $job)"
		grep -E '"processes' "$work/probe-hold.json" >&2 || true
		"$gl" job cancel "$job" >/dev/null 2>&1 || true
		return 1
	fi
	uid=$(awk '/^Uid:/{print $2}' "/proc/$pid/status" 2>/dev/null || echo "?")
	say "NVML lists the task's process: pid $pid holding $used MiB, running as uid $uid (job $job)"
	echo "pid=$pid used_mib=$used uid=$uid" >"$work/process.txt"
	"$gl" job cancel "$job" >/dev/null 2>&1 || true
}

# share_check runs two tasks that share the GPU by memory (unenforced:
# no MPS here) and checks the watchdog on real NVML: both run at once, the
# one within its 4 GiB share succeeds, and the one holding 4 GiB of a
# 3 GiB share is stopped as over_gpu_share.
share_check() {
	local within over sw so both=0
	submit_share() {
		"$gl" job submit --gpus 1 --gpu-memory "$1" --gpu-sharing unenforced --json -- python3 -c "import time, torch; x = torch.empty($2 << 30, dtype=torch.uint8, device='cuda'); print('holding $2 GiB', flush=True); time.sleep($3)" |
			sed -n 's/^  "id": "\([^"]*\)".*/\1/p' | head -1
	}
	state_of() { "$gl" job status "$1" --json | sed -n 's/^  "state": "\([^"]*\)".*/\1/p'; }
	within=$(submit_share 4G 1 30)
	over=$(submit_share 3G 4 120)
	for _ in $(seq 1 400); do
		sw=$(state_of "$within")
		so=$(state_of "$over")
		[[ $sw == running && $so == running ]] && both=1
		[[ $sw != pending && $sw != running && $so != pending && $so != running ]] && break
		sleep 0.5
	done
	"$gl" job status "$within" >"$work/share-within.txt" 2>&1 || true
	"$gl" job status "$over" >"$work/share-over.txt" 2>&1 || true
	cat "$work/share-within.txt" "$work/share-over.txt" >&2
	if [[ $both != 1 || $sw != succeeded || $so != failed ]] || ! grep -q "over its share" "$work/share-over.txt"; then
		say "FAIL: shared tasks: ran together=$both, within its share=$sw, over its share=$so (want 1, succeeded, failed over its share)"
		"$gl" job cancel "$over" >/dev/null 2>&1 || true
		return 1
	fi
	say "two shares of the GPU ran together; the watchdog stopped the one over its share, and the other succeeded"
}

# zombie_share_check runs a shared task whose main thread exits
# (pthread_exit) while the process, on its other threads, keeps 4 GiB of
# a 3 GiB share: /proc shows the process as a zombie, yet it holds the
# memory. The watchdog must still trace it to its task and stop it.
zombie_share_check() {
	local job st
	job=$("$gl" job submit --gpus 1 --gpu-memory 3G --gpu-sharing unenforced --json -- python3 -c "import ctypes, threading, time, torch; x = torch.empty(4 << 30, dtype=torch.uint8, device='cuda'); torch.cuda.synchronize(); threading.Thread(target=time.sleep, args=(120,)).start(); print('holding 4 GiB; main thread exits', flush=True); ctypes.CDLL(None).pthread_exit(None)" |
		sed -n 's/^  "id": "\([^"]*\)".*/\1/p' | head -1)
	for _ in $(seq 1 240); do
		st=$("$gl" job status "$job" --json | sed -n 's/^  "state": "\([^"]*\)".*/\1/p')
		[[ $st != pending && $st != running ]] && break
		sleep 0.5
	done
	"$gl" job status "$job" >"$work/share-zombie.txt" 2>&1 || true
	cat "$work/share-zombie.txt" >&2
	if [[ $st != failed ]] || ! grep -q "over its share" "$work/share-zombie.txt"; then
		say "FAIL: a share whose main thread exited ended '$st', want failed over its share"
		"$gl" job cancel "$job" >/dev/null 2>&1 || true
		return 1
	fi
	say "a share whose main thread exited while it held too much was stopped over its share"
}

# A one-GPU task sees exactly its GPU: gpulayer dev (a coordinator and an
# agent on this machine's real NVML), one task that prints what CUDA and
# nvidia-smi show it. Reads only; it changes no GPU setting.
gl=${GPULAYER:-}
if [[ ${TASK_CHECK:-1} == 1 && -z $gl ]] && command -v go >/dev/null 2>&1; then
	say "building gpulayer for the task check"
	(cd "$root" && CGO_ENABLED=1 go build -o "$work/gpulayer" ./cmd/gpulayer)
	gl=$work/gpulayer
fi
if [[ ${TASK_CHECK:-1} == 1 && -n $gl ]]; then
	"$gl" dev --http-addr 127.0.0.1:0 --env-file "$work/env" --log-level warn >"$work/dev.log" 2>&1 &
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
		# nvidia-smi lists every GPU whatever CUDA_VISIBLE_DEVICES says;
		# CUDA itself (through torch, where the machine has it) shows what
		# the task can use.
		if ! "$gl" job submit --gpus 1 --wait -- sh -c 'echo "CVD=$CUDA_VISIBLE_DEVICES"; nvidia-smi -L; python3 -c "import torch; print(\"CUDA_DEVICES\", torch.cuda.device_count(), \"GPU-\" + str(torch.cuda.get_device_properties(0).uuid))" 2>&1 || true' >"$work/task.out" 2>"$work/task.err"; then
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
		if cuda=$(grep '^CUDA_DEVICES ' "$work/task.out"); then
			if [[ $cuda != "CUDA_DEVICES 1 $cvd" ]]; then
				say "FAIL: CUDA in the task saw '$cuda', want one device, $cvd"
				status=1
			else
				say "CUDA in the task sees one device, $cvd"
			fi
			process_check || status=1
			share_check || status=1
			zombie_share_check || status=1
		else
			say "no torch here: CUDA's own view of the task and the process check were not run"
		fi
		metrics_check || status=1
	fi
	kill "$devpid" 2>/dev/null || true
	wait "$devpid" 2>/dev/null || true
fi

if [[ ${RUN_TESTS:-0} == 1 ]]; then
	say "running go test -race ./agent/devices/..."
	(cd "$root" && go test -race -count=1 -v -run 'TestOpenReal' ./agent/devices/ && go test -race -count=1 ./agent/devices/...) || status=1
fi

if [[ -n ${REPORT_DIR:-} ]]; then
	mkdir -p "$REPORT_DIR"
	for f in nvidia-smi.csv gpuinventory.csv inventory.json probe.json preflight.json preflight.log task.out metrics.txt metrics-smi.csv probe-hold.json process.txt share-within.txt share-over.txt share-zombie.txt; do
		[[ -f $work/$f ]] && cp "$work/$f" "$REPORT_DIR/"
	done
	# The dev instance's log, without the admin token it printed.
	[[ -f $work/dev.log ]] && sed 's/^\(  GPULAYER_TOKEN=\).*/\1[removed]/' "$work/dev.log" >"$REPORT_DIR/dev.log"
fi

if [[ $status -eq 0 ]]; then
	say "OK"
fi
exit "$status"
