# shellcheck shell=bash
# Go for what this repository builds from Go modules (the e2e tier's Kubernetes
# control plane, Karpenter's scheduling benchmark). Sourced, not run:
#
#   . scripts/go-modules.sh
#   kp_go_setup MODULE_DIR [local|auto]
#
# sets KP_GO (the go binary) and exports the environment every go command then runs
# with:
#   - module and build caches under ${XDG_CACHE_HOME:-~/.cache}/karpenter-c/go, so a CI
#     cache of ~/.cache keeps them;
#   - the module proxy only: the machine's GOPROXY (KP_GOPROXY overrides it) without
#     `direct` or `off`, so nothing is fetched from version control, i.e. from outside
#     the registries; checksums from the committed go.sum (-mod=readonly: a module
#     missing there is an error, not a download), else from the checksum database;
#   - `local`: the toolchain found must satisfy the module's `go` line itself
#     (KP_GO, go on PATH, /usr/local/go/bin/go, the first new enough);
#     `auto`: a module that needs a newer Go than the machine's gets that release of
#     golang.org/toolchain from the proxy (a Go module like any other), once;
#   - nothing of the caller's that changes the build (GOFLAGS, GOOS, GOEXPERIMENT ...).

KP_GO_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-c/go"

# The `go` line of MODULE_DIR/go.mod.
kp_go_wanted() { awk '$1 == "go" { print $2; exit }' "$1/go.mod"; }

# kp_go_version_at_least HAVE WANT
kp_go_version_at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# The version a module requires in DIR/go.mod: kp_go_mod_version DIR MODULE.
kp_go_mod_version() {
  awk -v m="$2" '$1 == "require" && $2 == m { print $3 } $1 == m && $2 ~ /^v/ { print $2 }' "$1/go.mod" |
    head -n 1
}

kp_go_find() {
  local want="$1" mode="$2" g have want_min
  for g in "${KP_GO:-}" "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go; do
    [ -n "$g" ] && [ -x "$g" ] || continue
    have=$(GOTOOLCHAIN=local "$g" env GOVERSION 2>/dev/null) || continue
    have=${have#go}
    have=${have%%[-+ ]*}
    # auto: any Go that can switch toolchains (1.21 and later) will do.
    want_min=$want
    [ "$mode" != auto ] || want_min=1.21
    if kp_go_version_at_least "$have" "$want_min"; then
      printf '%s\n' "$g"
      return 0
    fi
  done
  return 1
}

kp_go_setup() {
  local dir="$1" mode="${2:-local}" want proxy
  want=$(kp_go_wanted "$dir")
  KP_GO=$(kp_go_find "$want" "$mode") || {
    printf 'go-modules: no Go %s or newer found (install it at /usr/local/go, or set KP_GO)\n' \
      "$([ "$mode" = auto ] && echo 1.21 || echo "$want")" >&2
    return 1
  }
  proxy="${KP_GOPROXY:-$(GOTOOLCHAIN=local "$KP_GO" env GOPROXY)}"
  proxy=$(printf '%s' "$proxy" | tr ',|' '\n\n' | grep -vx -e direct -e off | paste -sd, -)
  [ -n "$proxy" ] || proxy=https://proxy.golang.org
  export GOMODCACHE="$KP_GO_CACHE/mod" GOCACHE="$KP_GO_CACHE/build" GOPROXY="$proxy" GOWORK=off
  export GOFLAGS="-mod=readonly -modcacherw" CGO_ENABLED=0
  if [ "$mode" = auto ]; then export GOTOOLCHAIN=auto; else export GOTOOLCHAIN=local; fi
  unset GOROOT GOPATH GOEXPERIMENT GOARCH GOOS GOAMD64 GOPRIVATE GONOSUMDB GONOPROXY GOINSECURE GONOSUMCHECK
}
