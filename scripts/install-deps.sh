#!/usr/bin/env bash
# Install the Debian packages a make target needs, and only those that are missing.
#
#   scripts/install-deps.sh [GROUP...]     GROUP: build (default), moto, bench, e2e, fuzz, cel
#
# Idempotent: a second run installs nothing and says so. Needs root only when
# something is actually missing.
#
# e2e and bench also need Go (1.26 or newer for e2e: the control plane is built from
# Go modules, tests/e2e/build-control-plane.sh), which Debian 12 does not package: it
# is looked for as go on PATH or /usr/local/go/bin/go, and its absence is explained.
set -euo pipefail

declare -A GROUP_PACKAGES=(
  [build]="gcc make cmake pkg-config libc6-dev libmicrohttpd-dev libssl-dev libcjson-dev
           libcurl4-openssl-dev libyaml-dev libcriterion-dev libxml2-dev openssl curl jq
           python3 python3-yaml clang-format"
  [moto]="python3-boto3 python3-botocore python3-cryptography python3-dateutil python3-flask
          python3-flask-cors python3-jinja2 python3-requests python3-responses python3-werkzeug
          python3-xmltodict python3-antlr4 curl"
  [bench]="wrk valgrind"
  [e2e]="jq openssl curl procps util-linux python3 python3-yaml prometheus"
  [fuzz]="clang libclang-rt-14-dev"
  [cel]="nodejs npm"
)

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(build)

missing=()
for group in "${groups[@]}"; do
  if [ -z "${GROUP_PACKAGES[$group]+set}" ]; then
    echo "install-deps: unknown group '$group' (known: ${!GROUP_PACKAGES[*]})" >&2
    exit 2
  fi
  # The CEL check needs node and npm, whoever packaged them (some ship npm inside nodejs).
  if [ "$group" = cel ] && command -v node >/dev/null && command -v npm >/dev/null; then continue; fi
  for pkg in ${GROUP_PACKAGES[$group]}; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$pkg")
    fi
  done
done

# The oldest Go each group builds with: e2e builds Kubernetes 1.37 (its go.mod says
# 1.26); bench builds Karpenter's benchmark, and any Go that can fetch the toolchain
# the module names (1.21+) does.
declare -A GROUP_GO=([e2e]=1.26 [bench]=1.21)

go_version() {
  local g
  for g in "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
    [ -n "$g" ] && [ -x "$g" ] || continue
    GOTOOLCHAIN=local "$g" env GOVERSION 2>/dev/null | sed 's/^go//; s/[-+ ].*//' && return 0
  done
  return 1
}

check_go() {
  local group want have
  for group in "${groups[@]}"; do
    want=${GROUP_GO[$group]:-}
    [ -n "$want" ] || continue
    have=$(go_version || true)
    if [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" = "$want" ]; then
      continue
    fi
    echo "install-deps: '$group' needs Go $want or newer (found: ${have:-none}); Debian 12 packages 1.19." >&2
    echo "install-deps: install an official Go release at /usr/local/go (go.dev/dl) and put /usr/local/go/bin on PATH" >&2
    [ "$group" = bench ] || exit 1
    echo "install-deps: (bench runs without it, minus Karpenter's side of the comparison)" >&2
  done
}

# moto itself comes from the next Debian release (scripts/moto-server.sh).
install_moto() {
  if printf '%s\n' "${groups[@]}" | grep -qx moto; then
    bash "$(dirname "$0")/moto-server.sh" install
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages for '${groups[*]}' are installed"
  install_moto
  check_go
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have never fetched package lists.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The packaged Prometheus and its node exporter would hold ports the e2e tier wants:
# tests start their own.
if printf '%s\n' "${missing[@]}" | grep -qx prometheus; then
  for svc in prometheus prometheus-node-exporter; do
    systemctl disable --now "$svc" 2>/dev/null || service "$svc" stop 2>/dev/null || true
  done
fi
install_moto
check_go
echo "install-deps: done"
