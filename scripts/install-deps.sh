#!/usr/bin/env bash
# Install the Debian packages a make target needs, and only those that are missing.
#
#   scripts/install-deps.sh [GROUP...]     GROUP: build (default), moto, bench, e2e, fuzz, cel
#
# Idempotent: a second run installs nothing and says so. Needs root only when
# something is actually missing.
set -euo pipefail

declare -A GROUP_PACKAGES=(
  [build]="gcc make cmake pkg-config libc6-dev libmicrohttpd-dev libssl-dev libcjson-dev
           libcurl4-openssl-dev libyaml-dev libcriterion-dev libxml2-dev openssl curl jq
           python3 python3-yaml clang-format"
  [moto]="python3-boto3 python3-botocore python3-cryptography python3-dateutil python3-flask
          python3-flask-cors python3-jinja2 python3-requests python3-responses python3-werkzeug
          python3-xmltodict python3-antlr4 curl"
  [bench]="wrk valgrind"
  [e2e]="golang-go golang-github-modern-go-reflect2-dev rsync jq etcd-server openssl curl procps
         prometheus"
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

# moto itself comes from the next Debian release (scripts/moto-server.sh).
install_moto() {
  if printf '%s\n' "${groups[@]}" | grep -qx moto; then
    bash "$(dirname "$0")/moto-server.sh" install
  fi
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages for '${groups[*]}' are installed"
  install_moto
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
# The packaged etcd service would hold the ports the e2e tier wants; tests run their own.
if printf '%s\n' "${missing[@]}" | grep -qx etcd-server; then
  systemctl disable --now etcd 2>/dev/null || service etcd stop 2>/dev/null || true
fi
# Likewise the packaged Prometheus and its node exporter: tests start their own.
if printf '%s\n' "${missing[@]}" | grep -qx prometheus; then
  for svc in prometheus prometheus-node-exporter; do
    systemctl disable --now "$svc" 2>/dev/null || service "$svc" stop 2>/dev/null || true
  done
fi
install_moto
echo "install-deps: done"
