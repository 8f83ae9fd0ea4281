#!/usr/bin/env bash
# Installs Debian packages for a test target's ensure-* script:
#   apt-install.sh WHO HINT PACKAGE...
# WHO names the caller in messages; HINT says what to do by hand when
# this cannot install (not root, or no apt-get). As root with apt-get the
# packages are installed quietly, bounded by GPULAYER_APT_TIMEOUT seconds
# (default 600); a failure prints apt-get's last lines. Exits non-zero
# when nothing was installed.
set -euo pipefail
who=$1 hint=$2
shift 2
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: $hint" >&2
  exit 1
fi
limit=${GPULAYER_APT_TIMEOUT:-600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "$who: installing Debian's $* with apt-get (up to ${limit}s)" >&2
if ! DEBIAN_FRONTEND=noninteractive timeout "$limit" sh -c \
  'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"' sh "$@" >"$log" 2>&1; then
  echo "$who: apt-get could not install $*; its last lines:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
