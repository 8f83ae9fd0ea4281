#!/usr/bin/env bash
# Makes sure a Chromium-family browser is installed for the dashboard's
# browser test (make test-ui) and prints its path as the last line.
#
# Order: $GPULAYER_CHROMIUM if it names an executable, then chromium,
# chromium-browser, google-chrome and google-chrome-stable on PATH. When
# none is found and this runs as root on a system with apt-get, Debian's
# chromium package is installed (quietly, bounded by
# GPULAYER_APT_TIMEOUT seconds, default 600). Anything else is an error
# that says what to install.
set -euo pipefail

find_browser() {
  if [ -n "${GPULAYER_CHROMIUM:-}" ] && [ -x "${GPULAYER_CHROMIUM}" ]; then
    echo "${GPULAYER_CHROMIUM}"
    return 0
  fi
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if browser=$(find_browser); then
  echo "$browser"
  exit 0
fi

"$(dirname "$0")/apt-install.sh" ensure-chromium "no chromium, chromium-browser or google-chrome on PATH; install one (Debian: apt-get install chromium) or set GPULAYER_CHROMIUM to its path" chromium
if ! browser=$(find_browser); then
  echo "ensure-chromium: chromium was installed but is not on PATH" >&2
  exit 1
fi
echo "$browser"
