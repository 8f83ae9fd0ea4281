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

"$(dirname "$0")/apt-install.sh" ensure-promtool "no promtool on PATH; install it (Debian: apt-get install prometheus) or set GPULAYER_PROMTOOL to its path" prometheus
if ! tool=$(find_promtool); then
  echo "ensure-promtool: prometheus was installed but promtool is not on PATH" >&2
  exit 1
fi
echo "$tool"
