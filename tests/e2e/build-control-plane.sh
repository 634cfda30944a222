#!/usr/bin/env bash
# Build the real Kubernetes control plane the e2e tier runs against, from Go modules:
# kube-apiserver, kube-scheduler, kube-controller-manager and kubectl of the release
# tests/e2e/k8s/go.mod pins, and etcd from the module tests/e2e/k8s/etcd/go.mod pins.
#
#   tests/e2e/build-control-plane.sh             builds unless cached; prints the bin directory
#   tests/e2e/build-control-plane.sh --bin-dir   only prints where the binaries go
#   tests/e2e/build-control-plane.sh --version   only prints the Kubernetes version
#   tests/e2e/build-control-plane.sh --cached    builds nothing: exit 0 if the cache holds
#                                                working binaries of this recipe, else 1
#
# Everything comes from the Go module proxy, checked against the committed go.sum
# files (-mod=readonly: a module missing from go.sum is an error, not a download).
# Nothing is vendored into the repository and nothing is fetched from version control.
# The first build takes a long time on two cores (progress and the log path are
# printed), so it happens once per machine: the binaries are cached under
# ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/kubernetes-<version>/bin, next to a
# RECIPE file holding a hash of everything that decides them (the go.mod/go.sum
# files, this script's flags, the Go version). A run that finds working binaries
# with the same hash exits at once; a changed recipe rebuilds.
#
# The module download cache and Go's build cache live under the same directory
# (karpenter-c/go/), so a CI cache of ~/.cache keeps them and a rebuild after a
# recipe change is incremental (scripts/go-modules.sh sets up Go: proxy only, the
# machine's own toolchain).
#
# Needs: Go >= the go.mod's `go` line (KP_GO, default: go on PATH, else
# /usr/local/go/bin/go), flock, sha256sum. Environment: KP_E2E_BUILD_JOBS (go build
# -p, default 2), KP_GOPROXY (default: the machine's GOPROXY without `direct`).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly MOD_DIR="$HERE/k8s"
readonly ETCD_MOD_DIR="$HERE/k8s/etcd"
readonly KARPENTER_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c"
readonly JOBS="${KP_E2E_BUILD_JOBS:-2}"
# What the API server and friends are built with, as Kubernetes' own build does for
# release binaries: static, no debug symbols, no test-only code, no x/net/trace.
readonly TAGS=selinux,notest,grpcnotrace
readonly COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubectl)

say() { printf 'build-control-plane: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

# shellcheck source-path=SCRIPTDIR source=../../scripts/go-modules.sh
. "$HERE/../../scripts/go-modules.sh"

K8S_VERSION=$(kp_go_mod_version "$MOD_DIR" k8s.io/kubernetes)
ETCD_VERSION=$(kp_go_mod_version "$ETCD_MOD_DIR" go.etcd.io/etcd/server/v3)
readonly K8S_VERSION ETCD_VERSION
readonly CACHE_DIR="$KARPENTER_CACHE/kubernetes-${K8S_VERSION#v}"
readonly BIN_DIR="$CACHE_DIR/bin"
readonly LOG="$CACHE_DIR/build.log"

# -X flags that make `--version` and the API server's /version report the release.
version_ldflags() {
  local v="${K8S_VERSION#v}" pkg flags=""
  local major="${v%%.*}" minor
  minor="${v#*.}"
  minor="${minor%%.*}"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    flags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  done
  printf '%s' "-s -w$flags"
}

recipe() {
  {
    printf 'kubernetes %s, etcd %s, tags %s, ldflags %s, %s\n' "$K8S_VERSION" "$ETCD_VERSION" \
      "$TAGS" "$(version_ldflags)" "$("$GO" env GOVERSION)"
    cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" "$ETCD_MOD_DIR/go.mod" "$ETCD_MOD_DIR/go.sum"
  } | sha256sum | cut -c1-16
}

# Working binaries of the right version and recipe, not just files: an interrupted
# copy or a binary built from another recipe must not count as cached.
cached_binaries_work() {
  local c
  [ "$(cat "$BIN_DIR/RECIPE" 2>/dev/null)" = "$RECIPE" ] || return 1
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    [[ "$("$BIN_DIR/$c" --version 2>/dev/null)" == *"$K8S_VERSION" ]] || return 1
  done
  [[ "$("$BIN_DIR/kubectl" version --client 2>/dev/null)" == *"$K8S_VERSION"* ]] || return 1
  [[ "$("$BIN_DIR/etcd" --version 2>/dev/null)" == *"${ETCD_VERSION#v}"* ]]
}

# build_module DIR OUT PACKAGE...: go build -o OUT (a file, or a directory ending in
# /), with progress every 100 packages compiled (`go build -v` names each package it
# compiles; cached ones are not named, so a warm rebuild prints little).
build_module() {
  local dir="$1" out="$2" total
  shift 2
  total=$(cd "$dir" && "$GO" list -deps -tags "$TAGS" "$@" | wc -l) ||
    die "go list failed in $dir (see $LOG)"
  say "compiling up to $total packages for ${*#k8s.io/kubernetes/cmd/} (go build -p $JOBS)"
  (cd "$dir" && "$GO" build -v -p "$JOBS" -trimpath -tags "$TAGS" -ldflags "$(version_ldflags)" \
    -o "$out" "$@" 2>&1) | tee -a "$LOG" | progress "$total" ||
    die "go build failed in $dir, see $LOG"
}

# progress TOTAL: a line on stderr every 100 lines read from stdin.
progress() {
  local n=0 start=$SECONDS line
  while IFS= read -r line; do
    n=$((n + 1))
    [ $((n % 100)) -ne 0 ] || say "  $n/$1 packages compiled, $((SECONDS - start))s"
  done
}

# Build into a scratch directory, then rename: a half-built bin directory never looks
# like a cache hit.
build_all() {
  local pkgs=() c
  for c in "${COMPONENTS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  rm -rf "$BIN_DIR.new"
  mkdir -p "$BIN_DIR.new"
  say "downloading modules (cache: $GOMODCACHE)"
  (cd "$MOD_DIR" && "$GO" mod download) >>"$LOG" 2>&1 || die "go mod download failed, see $LOG"
  (cd "$ETCD_MOD_DIR" && "$GO" mod download) >>"$LOG" 2>&1 || die "go mod download failed, see $LOG"
  build_module "$ETCD_MOD_DIR" "$BIN_DIR.new/etcd" go.etcd.io/etcd/server/v3
  build_module "$MOD_DIR" "$BIN_DIR.new/" "${pkgs[@]}"
  printf '%s\n' "$RECIPE" >"$BIN_DIR.new/RECIPE"
  rm -rf "$BIN_DIR"
  mv "$BIN_DIR.new" "$BIN_DIR"
}

main() {
  case "${1:-}" in
    --bin-dir) printf '%s\n' "$BIN_DIR" && exit 0 ;;
    --version) printf '%s\n' "$K8S_VERSION" && exit 0 ;;
    "" | --cached) ;;
    *) die "usage: $0 [--bin-dir|--version|--cached]" ;;
  esac
  kp_go_setup "$MOD_DIR" local || die "cannot build $MOD_DIR"
  GO=$KP_GO
  readonly GO
  RECIPE=$(recipe)
  readonly RECIPE
  if [ "${1:-}" = --cached ]; then
    cached_binaries_work
    exit
  fi
  if cached_binaries_work; then
    printf '%s\n' "$BIN_DIR"
    exit 0
  fi
  command -v flock >/dev/null || die "flock not found (util-linux)"
  mkdir -p "$CACHE_DIR"
  # Two runs at once (parallel make targets, two CI jobs) would build twice and race on
  # the rename; the second waits and then finds the cache.
  exec 9>"$CACHE_DIR/.lock"
  flock 9
  if cached_binaries_work; then
    printf '%s\n' "$BIN_DIR"
    exit 0
  fi
  local start
  start=$(date +%s)
  : >"$LOG"
  say "building Kubernetes $K8S_VERSION and etcd $ETCD_VERSION with $("$GO" env GOVERSION), once per machine"
  say "log: $LOG"
  build_all
  cached_binaries_work || die "built binaries do not run or report $K8S_VERSION / etcd $ETCD_VERSION, see $LOG"
  say "done in $(($(date +%s) - start))s: $BIN_DIR"
  printf '%s\n' "$BIN_DIR"
}

main "$@"
