#!/usr/bin/env bash
# Makes sure the Python that make test-python uses ($1, default
# /usr/bin/python3) can build a virtual environment and the SDK offline:
# its venv, setuptools and wheel modules. When one is missing and this
# runs as root on a system with apt-get, Debian's python3-venv,
# python3-setuptools and python3-wheel are installed, quietly, bounded by
# GPULAYER_APT_TIMEOUT seconds (default 600). Anything else is an error
# that says what to install.
set -euo pipefail
py=${1:-/usr/bin/python3}
have() { "$py" -c 'import ensurepip, venv, setuptools, wheel' >/dev/null 2>&1; }
have && exit 0
"$(dirname "$0")/apt-install.sh" ensure-python "$py lacks venv, setuptools or wheel; install them (Debian: apt-get install python3-venv python3-setuptools python3-wheel)" python3-venv python3-setuptools python3-wheel
have || { echo "ensure-python: $py still lacks venv, setuptools or wheel" >&2; exit 1; }
