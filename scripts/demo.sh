#!/usr/bin/env bash
# make demo: a dev coordinator and agent in one process, a sample GPU job,
# its logs and its final state with attribution, then a clean shutdown.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=./bin/gpulayer
work=$(mktemp -d)
envfile="$work/env"
log="$work/dev.log"
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "starting gpulayer dev (coordinator + agent in one process)"
"$BIN" dev --http-addr 127.0.0.1:0 --plugin-dir bin/plugins --env-file "$envfile" >"$work/dev.out" 2>"$log" &
pid=$!
for _ in $(seq 1 300); do
  [ -s "$envfile" ] && break
  kill -0 "$pid" 2>/dev/null || { echo "gpulayer dev exited early:"; cat "$log"; exit 1; }
  sleep 0.1
done
[ -s "$envfile" ] || { echo "gpulayer dev did not become ready"; cat "$log"; exit 1; }
set -a; . "$envfile"; set +a
cat "$work/dev.out"
grep -E 'devices discovered|fake GPUs|NVML' "$log" | sed 's/^/  agent: /' || true

step "submitting a 1-GPU job through the exec plugin"
job=$("$BIN" job submit --name gpu-hello --gpus 1 -- sh -c '
  echo "hello from task $GPULAYER_TASK_ID on $(hostname)"
  echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L; else echo "(no nvidia-smi on this machine: the GPUs are go-nvml mock devices)"; fi')
echo "job id: $job"

step "streaming its logs"
"$BIN" job logs --follow "$job"

step "the finished job, with attribution"
"$BIN" job status "$job"
state=$("$BIN" job status --json "$job" | sed -n 's/^  "state": "\(.*\)",$/\1/p' | head -1)

if ls bin/plugins/gpulayer-executor-* >/dev/null 2>&1; then
  plugin=$(basename "$(ls bin/plugins/gpulayer-executor-* | head -1)")
  name=${plugin#gpulayer-executor-}
  step "a job through the out-of-tree example plugin '$name' (loaded from --plugin-dir)"
  job2=$("$BIN" job submit --executor "$name" --config '{"message":"hello from an out-of-tree plugin","repeat":2}')
  "$BIN" job logs --follow "$job2"
  "$BIN" job status "$job2"
fi

step "shutting down"
kill -TERM "$pid"
wait "$pid" || true
pid=""
if [ "$state" != "succeeded" ]; then
  echo "demo job ended $state"
  exit 1
fi
echo "demo finished: job $job $state"
