#!/usr/bin/env bash
# The AWS provider's instance types, prices and interruption queue against moto's server.
#
#   test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR
#
# Installs moto when it is missing (scripts/moto-server.sh: Debian's python3-moto;
# needs root then), starts it on a free loopback port, runs the test program
# BUILD_DIR/tests/test_aws_a_moto against it and stops it, also on failure.
# Fails loudly when moto cannot be installed or started: it never skips.
set -euo pipefail

build=${1:?usage: test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR}
moto="$src/scripts/moto-server.sh"
program="$build/tests/test_aws_a_moto"
[ -x "$program" ] || program="$build/test_aws_a_moto"
[ -x "$program" ] || { echo "test_aws_a_moto: test program not built in $build" >&2; exit 1; }

bash "$moto" install
dir=$(mktemp -d /tmp/kp-moto-XXXXXX)
cleanup() {
  bash "$moto" stop "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT
url=$(bash "$moto" start "$dir")
echo "test_aws_a_moto: moto at $url"
KP_AWS_MOTO_URL="$url" "$program" --jobs 1
