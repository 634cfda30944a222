#!/usr/bin/env bash
# Runs one moto-backed test program: installs moto when it is missing
# (scripts/moto-server.sh: Debian's python3-moto; needs root then), starts it on a
# free loopback port, runs BUILD_DIR/tests/PROGRAM with KP_AWS_MOTO_URL set and
# stops the server, also on failure. Fails loudly when moto cannot be installed or
# started: it never skips.
#
#   moto_run.sh BUILD_DIR SOURCE_DIR PROGRAM
set -euo pipefail

build=${1:?usage: moto_run.sh BUILD_DIR SOURCE_DIR PROGRAM}
src=${2:?usage: moto_run.sh BUILD_DIR SOURCE_DIR PROGRAM}
name=${3:?usage: moto_run.sh BUILD_DIR SOURCE_DIR PROGRAM}
moto="$src/scripts/moto-server.sh"
program="$build/tests/$name"
[ -x "$program" ] || program="$build/$name"
[ -x "$program" ] || { echo "$name: test program not built in $build" >&2; exit 1; }

bash "$moto" install
dir=$(mktemp -d /tmp/kp-moto-XXXXXX)
cleanup() {
  bash "$moto" stop "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT
url=$(bash "$moto" start "$dir")
echo "$name: moto at $url"
KP_AWS_MOTO_URL="$url" "$program" --jobs 1
