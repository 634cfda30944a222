#!/usr/bin/env bash
# moto, the AWS emulator, for the AWS integration tests: installs Debian's
# python3-moto and runs its server on loopback.
#
#   moto-server.sh install              install moto if it is missing (root only then)
#   moto-server.sh start DIR [PORT]     start in the background (a free port unless given),
#                                       wait until it answers, print its URL; DIR holds
#                                       the pid file and the log
#   moto-server.sh stop DIR             stop the server started with DIR
#   moto-server.sh url DIR              print the URL of the server started with DIR
#
# Debian 12 has no python3-moto; the next Debian release has it, pure Python, and it
# runs on Debian 12's own dependencies. Only that one package is fetched from the
# newer release, through a private apt configuration made at run time from this
# machine's own sources: the machine's apt setup is never changed and no mirror is
# named here. Idempotent: a second `install` does nothing.
#
# The server runs on Debian's interpreter (/usr/bin/python3), which is where the
# package installs, whatever python3 comes first on PATH.
#
# Why Debian's moto (5.1) and not the newest from PyPI (5.2.5 when checked with
# scripts/moto-probe.py): neither has capacity reservations or placement groups (both
# answer HTTP 500, not implemented); both answer EKS DescribeCluster (endpoint, a
# random non-certificate CA, the service CIDR given) and DescribeInstanceStatus (but
# neither applies an instance-status filter as EC2 does); neither honours DryRun on
# DescribeInstanceTypes. 5.2.5 adds only DryRun on CreateFleet, which the provider
# does not send. Re-run the probe when a new release comes out.
set -euo pipefail

readonly PYTHON=/usr/bin/python3
readonly NEWER_RELEASE="${KP_MOTO_DEBIAN_RELEASE:-trixie}"
readonly DEPS="python3-boto3 python3-botocore python3-cryptography python3-dateutil
  python3-flask python3-flask-cors python3-jinja2 python3-requests python3-responses
  python3-werkzeug python3-xmltodict python3-antlr4"
readonly START_TIMEOUT="${KP_MOTO_START_TIMEOUT:-60}"

say() { printf 'moto-server: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}
usage() {
  sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

have_moto() { "$PYTHON" -c 'import moto.server' 2>/dev/null; }

# deb822 stanzas of the machine's sources that carry the current release's main
# archive, with Suites set to the newer release. Security and -updates suites are
# dropped: they have their own layouts and the newer package needs neither.
newer_sources() {
  local codename=$1 file=/etc/apt/sources.list.d/debian.sources
  if [ -f "$file" ]; then
    awk -v cur="$codename" -v new="$NEWER_RELEASE" '
      function flush() { if (keep && text != "") printf "%s\n", text; text = ""; keep = 0 }
      /^[[:space:]]*$/ { flush(); next }
      /^Suites:/ {
        n = split($0, w, /[[:space:]]+/); keep = 0
        for (i = 2; i <= n; i++) if (w[i] == cur) keep = 1
        text = text "Suites: " new "\n"; next
      }
      { text = text $0 "\n" }
      END { flush() }' "$file"
    return
  fi
  # One-line format: "deb URI codename components..."
  awk -v cur="$codename" -v new="$NEWER_RELEASE" '
    $1 == "deb" && $3 == cur { printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n\n", $2, new }
    $1 == "deb" && $2 ~ /^\[/ && $4 == cur { printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n\n", $3, new }
  ' /etc/apt/sources.list 2>/dev/null || true
}

install_deps() {
  local missing=() pkg
  for pkg in $DEPS; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return
  say "installing dependencies: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

# Download python3-moto from the newer release into $1 with a private apt state.
download_moto() {
  local work=$1 codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot tell this machine's Debian release"
  mkdir -p "$work/sources" "$work/lists/partial" "$work/cache/archives/partial" "$work/deb"
  newer_sources "$codename" >"$work/sources/newer.sources"
  [ -s "$work/sources/newer.sources" ] || die "no '$codename' entry in the apt sources to derive $NEWER_RELEASE from"
  local opts=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$work/sources"
    -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" -o APT::Get::List-Cleanup=0)
  apt-get "${opts[@]}" update -q >&2 || die "apt-get update for $NEWER_RELEASE failed"
  (cd "$work/deb" && apt-get "${opts[@]}" download python3-moto >&2) ||
    die "could not download python3-moto from $NEWER_RELEASE"
}

cmd_install() {
  if have_moto; then
    say "moto is installed ($("$PYTHON" -c 'import moto; print(moto.__version__)'))"
    return
  fi
  [ "$(id -u)" -eq 0 ] || die "moto is missing; run '$0 install' as root"
  install_deps
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ "$codename" = "$NEWER_RELEASE" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-moto
  else
    local work
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    download_moto "$work"
    dpkg -i "$work"/deb/python3-moto_*.deb >&2
  fi
  have_moto || die "python3-moto installed but '$PYTHON -c import moto.server' fails"
  say "installed moto $("$PYTHON" -c 'import moto; print(moto.__version__)')"
}

free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd_start() {
  local dir=${1:-} port=${2:-}
  [ -n "$dir" ] || usage
  have_moto || die "moto is not installed; run '$0 install' (as root)"
  mkdir -p "$dir"
  [ -n "$port" ] || port=$(free_port)
  local url="http://127.0.0.1:$port"
  # setsid: the server gets its own process group, so `stop` ends it and any child.
  setsid "$PYTHON" -m moto.server -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 </dev/null &
  echo $! >"$dir/moto.pid"
  echo "$url" >"$dir/moto.url"
  local waited=0
  until curl -fsS -o /dev/null "$url/moto-api/" 2>/dev/null; do
    if ! kill -0 "$(cat "$dir/moto.pid")" 2>/dev/null; then
      tail -n 20 "$dir/moto.log" >&2 || true
      die "moto exited during start-up (log: $dir/moto.log)"
    fi
    [ "$waited" -lt $((START_TIMEOUT * 5)) ] || {
      cmd_stop "$dir"
      die "moto did not answer within ${START_TIMEOUT}s"
    }
    sleep 0.2
    waited=$((waited + 1))
  done
  echo "$url"
}

cmd_stop() {
  local dir=${1:-}
  [ -n "$dir" ] || usage
  [ -f "$dir/moto.pid" ] || return 0
  local pid
  pid=$(cat "$dir/moto.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$dir/moto.pid"
}

case "${1:-}" in
install) cmd_install ;;
start) shift && cmd_start "$@" ;;
stop) shift && cmd_stop "$@" ;;
url) [ -n "${2:-}" ] && cat "$2/moto.url" || usage ;;
*) usage ;;
esac
