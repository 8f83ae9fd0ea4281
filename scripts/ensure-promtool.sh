#!/usr/bin/env bash
# Makes sure promtool is installed for make test-metrics and prints its
# path as the last line.
#
# Order: $GPULAYER_PROMTOOL if it names an executable, then promtool on
# PATH. When there is none and this runs as root on a system with
# apt-get, Debian's prometheus package (which carries promtool) is
# installed, quietly, bounded by GPULAYER_APT_TIMEOUT seconds (default
# 600). Anything else is an error that says what to install.
set -euo pipefail

find_promtool() {
  if [ -n "${GPULAYER_PROMTOOL:-}" ] && [ -x "${GPULAYER_PROMTOOL}" ]; then
    echo "${GPULAYER_PROMTOOL}"
    return 0
  fi
  if command -v promtool >/dev/null 2>&1; then
    command -v promtool
    return 0
  fi
  return 1
}

if tool=$(find_promtool); then
  echo "$tool"
  exit 0
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-promtool: no promtool on PATH;" >&2
  echo "install it (Debian: apt-get install prometheus) or set GPULAYER_PROMTOOL to its path" >&2
  exit 1
fi

limit=${GPULAYER_APT_TIMEOUT:-600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "ensure-promtool: installing Debian's prometheus package (for promtool) with apt-get (up to ${limit}s)" >&2
if ! DEBIAN_FRONTEND=noninteractive timeout "$limit" sh -c \
  'apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus' >"$log" 2>&1; then
  echo "ensure-promtool: apt-get could not install prometheus; its last lines:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
if ! tool=$(find_promtool); then
  echo "ensure-promtool: prometheus was installed but promtool is not on PATH" >&2
  exit 1
fi
echo "$tool"
