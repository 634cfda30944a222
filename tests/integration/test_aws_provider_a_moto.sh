#!/usr/bin/env bash
# The AWS provider's instance types, prices and interruption queue against moto's server.
#   test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR  (moto_run.sh starts and stops the server)
set -euo pipefail
exec bash "$(dirname "$0")/moto_run.sh" "${1:?usage: test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR}" "${2:?usage: test_aws_provider_a_moto.sh BUILD_DIR SOURCE_DIR}" test_aws_a_moto
