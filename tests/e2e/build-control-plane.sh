#!/usr/bin/env bash
# Build the real Kubernetes control plane the e2e tier runs against:
# kube-apiserver, kube-scheduler and kube-controller-manager 1.20.2, from Debian's
# `kubernetes` source package, with Debian's own Go.
#
#   tests/e2e/build-control-plane.sh        prints the bin directory on stdout
#
# Debian ships no server binaries, but its source package carries the whole upstream
# tree with vendor/, so nothing is fetched from outside the distribution. The build
# takes 10-20 minutes on two cores, so it happens once per machine: the binaries are
# cached under ${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/kubernetes-1.20.2/bin and a
# second run that finds working binaries there exits at once.
#
# One change to the upstream tree: its vendored reflect2 1.0.1 (under json-iterator,
# the API server's JSON decoder) predates Go 1.18 and makes the server panic on any
# request body with a map such as a Pod's resource requests. Debian's own reflect2
# 1.0.2 (golang-github-modern-go-reflect2-dev), the release made for Go 1.18, is
# copied over it before the build.
#
# Needs: golang-go golang-github-modern-go-reflect2-dev rsync jq make tar apt-get
# (scripts/install-deps.sh e2e). Root is not needed: apt runs with a private
# configuration in a temporary directory.
#
# Environment: KP_E2E_KEEP_BUILD_TREE=1 keeps the unpacked tree for debugging.
set -euo pipefail

readonly K8S_VERSION=1.20.2
readonly COMPONENTS=(kube-apiserver kube-scheduler kube-controller-manager)
readonly CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/kubernetes-${K8S_VERSION}"
readonly BIN_DIR="$CACHE_DIR/bin"
readonly LOG="$CACHE_DIR/build.log"
readonly REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2
# Kubernetes 1.20's vendored tree builds with Debian's Go 1.19 (golang-go), not with
# whatever newer Go is first on PATH: pin it for this build only. KP_E2E_GO_ROOT
# overrides it for a machine that keeps Go 1.19 elsewhere.
readonly GO_ROOT="${KP_E2E_GO_ROOT:-/usr/lib/go-1.19}"
# Written next to the binaries; bump it when the recipe changes, so binaries built by
# an older recipe are rebuilt rather than reused.
readonly RECIPE="kubernetes ${K8S_VERSION}, Debian source, reflect2 1.0.2 from Debian, go-openapi empty-string fix v2"

WORK=""

say() { printf 'build-control-plane: %s\n' "$*" >&2; }
die() {
  say "error: $*"
  exit 1
}

# Working binaries of the right version, not just files: an interrupted copy or a
# binary built from another tree must not count as cached.
cached_binaries_work() {
  local c
  [ "$(cat "$BIN_DIR/RECIPE" 2>/dev/null)" = "$RECIPE" ] || return 1
  for c in "${COMPONENTS[@]}"; do
    [ -x "$BIN_DIR/$c" ] || return 1
    [[ "$("$BIN_DIR/$c" --version 2>/dev/null)" == *"v${K8S_VERSION}"* ]] || return 1
  done
}

# Debian's Go first on PATH, and nothing from the environment that would make it
# fetch or switch toolchains.
pin_go() {
  [ -x "$GO_ROOT/bin/go" ] || die "Debian's Go 1.19 is not at $GO_ROOT (run as root: scripts/install-deps.sh e2e)"
  export PATH="$GO_ROOT/bin:$PATH" GOTOOLCHAIN=local
  unset GOROOT GOFLAGS
  [[ "$(go version)" == *" go1.19"* ]] || die "$GO_ROOT/bin/go is not Go 1.19: $(go version)"
}

require_tools() {
  local missing=() t
  for t in make rsync jq tar apt-get flock; do
    command -v "$t" >/dev/null 2>&1 || missing+=("$t")
  done
  [ -f "$REFLECT2/go_above_118.go" ] || missing+=("golang-github-modern-go-reflect2-dev")
  [ ${#missing[@]} -eq 0 ] ||
    die "missing: ${missing[*]} (run as root: scripts/install-deps.sh e2e)"
}

cleanup() {
  [ -n "$WORK" ] || return 0
  if [ "${KP_E2E_KEEP_BUILD_TREE:-0}" = 1 ]; then
    say "kept build tree in $WORK"
  else
    rm -rf "$WORK"
  fi
}

# Source lists are derived from the machine's own binary lists, so the repository
# never names a mirror and the build uses whatever mirror (or snapshot) the machine
# is configured for.
write_source_lists() {
  local parts="$1"
  local deb822=/etc/apt/sources.list.d/debian.sources classic=/etc/apt/sources.list
  mkdir -p "$parts"
  if [ -r "$deb822" ]; then
    sed -E 's/^Types:.*/Types: deb-src/' "$deb822" >"$parts/debian-src.sources"
  fi
  if [ -r "$classic" ]; then
    sed -nE 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' "$classic" >"$parts/classic-src.list"
  fi
  grep -qsE '^(Types: deb-src|deb-src )' "$parts"/* ||
    die "no Debian package sources found in $deb822 or $classic"
}

# A private apt configuration: the machine's sources, state and cache stay untouched.
apt_private() {
  apt-get -q \
    -o Dir::Etc::sourcelist=/dev/null \
    -o "Dir::Etc::sourceparts=$WORK/apt/parts" \
    -o "Dir::State::Lists=$WORK/apt/lists" \
    -o "Dir::Cache=$WORK/apt/cache" \
    "$@"
}

fetch_source() {
  say "fetching the kubernetes source package (log: $LOG)"
  write_source_lists "$WORK/apt/parts"
  mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial" "$WORK/src"
  apt_private update >>"$LOG" 2>&1 || die "apt-get update failed, see $LOG"
  (cd "$WORK/src" && apt_private source --download-only kubernetes) >>"$LOG" 2>&1 ||
    die "apt-get source kubernetes failed, see $LOG"
}

# Prints the unpacked tree's path. Debian versions it 1.20.5+really1.20.2: the
# upstream part after "really" is what matters.
unpack_source() {
  local orig top
  orig=$(find "$WORK/src" -maxdepth 1 -name "kubernetes_*${K8S_VERSION}.orig.tar.gz" | head -n 1)
  [ -n "$orig" ] || die "the distribution's kubernetes source is not ${K8S_VERSION}: $(ls "$WORK/src")"
  say "unpacking $(basename "$orig")"
  top=$(tar -tzf "$orig" | head -n 1)
  top=${top%%/*}
  tar -xzf "$orig" -C "$WORK/src" || die "could not unpack $orig"
  [ -f "$WORK/src/$top/Makefile" ] || die "unexpected layout in $orig"
  printf '%s\n' "$WORK/src/$top"
}

# The vendored copy keeps its import path; `go build -mod=vendor` checks
# vendor/modules.txt against go.mod, not file contents, so only the files change.
replace_reflect2() {
  local vendored="$1/vendor/github.com/modern-go/reflect2"
  [ -d "$vendored" ] || die "no vendored reflect2 in $1"
  say "replacing vendored reflect2 with Debian's $(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev 2>/dev/null || echo 1.0.2)"
  rsync -a --delete --exclude go.mod "$REFLECT2/" "$vendored/"
}

# go-openapi/validate 0.19 tells "null" from a value by comparing two reflect.Values
# with DeepEqual, which under Go >= 1.19 also matches the zero value: the API server
# then refuses every empty string in a custom resource ("must be of type string:
# \"null\""), e.g. a condition's message. Later releases test for nil alone.
fix_openapi_null_check() {
  local expr='if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {'
  local files f
  mapfile -t files < <(grep -rlF "$expr" "$1/vendor" "$1/staging" 2>/dev/null || true)
  [ ${#files[@]} -gt 0 ] || die "the null check to fix is not in $1/vendor"
  for f in "${files[@]}"; do
    sed -i "s/if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {/if data == nil {/" "$f"
    say "null check fixed for Go >= 1.19 in ${f#"$1"/}"
  done
}

# Kubernetes' own make, not `go build`: it sets up its GOPATH and generates the
# OpenAPI definitions the API server needs. One invocation shares that work.
build_tree() {
  local tree="$1" what="" c
  for c in "${COMPONENTS[@]}"; do what+=" cmd/$c"; done
  say "building${what} with $(go version | cut -d' ' -f3) (about 10-20 minutes on 2 cores)"
  # GOPROXY=off: everything needed is under vendor/; a network fetch would be a bug.
  (cd "$tree" && GOPROXY=off make WHAT="${what# }") 2>&1 | tee -a "$LOG" | sed -u 's/^/  | /' >&2 ||
    die "make failed, see $LOG"
}

# Copy then rename, so a half-copied bin directory never looks like a cache hit.
install_binaries() {
  local out="$1/_output/local/bin/linux/amd64" c
  [ "$(go env GOARCH)" = amd64 ] || out="$1/_output/local/bin/linux/$(go env GOARCH)"
  rm -rf "$BIN_DIR.new"
  mkdir -p "$BIN_DIR.new"
  for c in "${COMPONENTS[@]}"; do
    [ -x "$out/$c" ] || die "make did not produce $out/$c, see $LOG"
    cp "$out/$c" "$BIN_DIR.new/$c"
  done
  printf '%s\n' "$RECIPE" >"$BIN_DIR.new/RECIPE"
  rm -rf "$BIN_DIR"
  mv "$BIN_DIR.new" "$BIN_DIR"
}

main() {
  if cached_binaries_work; then
    printf '%s\n' "$BIN_DIR"
    exit 0
  fi
  require_tools
  pin_go
  mkdir -p "$CACHE_DIR"
  # Two runs at once (parallel make targets, two CI jobs) would build twice and race on
  # the rename; the second waits and then finds the cache.
  exec 9>"$CACHE_DIR/.lock"
  flock 9
  if cached_binaries_work; then
    printf '%s\n' "$BIN_DIR"
    exit 0
  fi

  local start tree
  start=$(date +%s)
  : >"$LOG"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/kp-k8s-build.XXXXXX")
  trap cleanup EXIT
  fetch_source
  tree=$(unpack_source)
  replace_reflect2 "$tree"
  fix_openapi_null_check "$tree"
  build_tree "$tree"
  install_binaries "$tree"
  cached_binaries_work || die "built binaries do not run or report v${K8S_VERSION}, see $LOG"
  say "done in $(($(date +%s) - start))s: $BIN_DIR"
  printf '%s\n' "$BIN_DIR"
}

main "$@"
