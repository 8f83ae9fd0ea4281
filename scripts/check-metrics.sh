#!/usr/bin/env bash
# make test-metrics: runs a real `gpulayer dev` (a coordinator and an
# agent with fake GPUs, in one process), runs one job on it so that the
# counters and timings have series, scrapes the coordinator's and the
# agent's /metrics, and runs `promtool check metrics` on each. Any line
# promtool prints fails the check (docs/metrics.md).
#
# Usage: scripts/check-metrics.sh BINARY PROMTOOL
set -euo pipefail

bin=$1
promtool=$2
work=$(mktemp -d)
dev_pid=
cleanup() {
  if [ -n "$dev_pid" ]; then
    kill "$dev_pid" 2>/dev/null || true
    wait "$dev_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Two free loopback ports: the coordinator's HTTP and the agent's metrics.
read -r coord_port agent_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
')
"$bin" dev --http-addr "127.0.0.1:$coord_port" --agent-metrics-addr "127.0.0.1:$agent_port" \
  --env-file "$work/env" --log-level warn >"$work/dev.log" 2>&1 &
dev_pid=$!

ready() { [ -s "$work/env" ] && curl -fsS "http://127.0.0.1:$agent_port/metrics" >/dev/null 2>&1; }
for _ in $(seq 600); do
  ready && break
  if ! kill -0 "$dev_pid" 2>/dev/null; then
    echo "check-metrics: gpulayer dev exited:" >&2
    cat "$work/dev.log" >&2
    exit 1
  fi
  sleep 0.1
done
if ! ready; then
  echo "check-metrics: gpulayer dev not ready within 60 s:" >&2
  cat "$work/dev.log" >&2
  exit 1
fi

set -a
# shellcheck disable=SC1091
. "$work/env"
set +a
if ! "$bin" job submit --wait -- true >"$work/job.log" 2>&1; then
  echo "check-metrics: the job on gpulayer dev failed:" >&2
  cat "$work/job.log" "$work/dev.log" >&2
  exit 1
fi

status=0
for target in "coordinator http://127.0.0.1:$coord_port/metrics" "agent http://127.0.0.1:$agent_port/metrics"; do
  read -r who url <<<"$target"
  curl -fsS "$url" >"$work/$who.txt"
  families=$(grep -c '^# TYPE ' "$work/$who.txt" || true)
  # promtool exits 0 on warnings too (camelCase, no _total): any output fails.
  if ! "$promtool" check metrics <"$work/$who.txt" >"$work/$who.lint" 2>&1 || [ -s "$work/$who.lint" ]; then
    echo "check-metrics: promtool check metrics on the $who's $url:" >&2
    cat "$work/$who.lint" >&2
    status=1
  else
    echo "==> $who: $families families, promtool check metrics reports nothing"
  fi
done
exit "$status"
