#!/usr/bin/env bash
# The Dockerfile without Docker: what can be checked on a Debian 12 machine that has
# built the binaries.
#
#   - two stages, debian:12 to build and debian:12-slim to run, as uid/gid 65532,
#     with both binaries copied from the build stage;
#   - the build stage installs the package holding the .pc file of every pkg-config
#     module CMakeLists.txt requires;
#   - the runtime stage names the package of every library a binary links directly
#     (readelf NEEDED), unless the slim base has it;
#   - every library `ldd` resolves, direct or not, comes from a package the runtime
#     stage installs, one of their dependencies (Depends/Pre-Depends, as dpkg records
#     them here), or the slim base (the closure of Essential and required packages);
#   - .dockerignore keeps build trees and .git out of the context.
#
#   tests/integration/test_dockerfile.sh BUILD_DIR SOURCE_DIR
#
# A sanitizer build (make test) links libasan/libubsan, which no release image
# carries: those are named and skipped.
set -euo pipefail

build=${1:?usage: test_dockerfile.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: test_dockerfile.sh BUILD_DIR SOURCE_DIR}
dockerfile="$src/Dockerfile"
bins=("$build/karpenter-controller" "$build/karpenter-webhook")
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
bad() { failed=$((failed + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

for tool in dpkg dpkg-query readelf ldd pkg-config awk; do
  command -v "$tool" >/dev/null || { echo "test_dockerfile: $tool is not installed"; exit 1; }
done
[ -f "$dockerfile" ] || { echo "test_dockerfile: no $dockerfile"; exit 1; }
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "test_dockerfile: $b not built"; exit 1; }
done

# ---------------------------------------------------------------- the Dockerfile

# Instructions one per line: continuations joined, comments and blank lines dropped.
instructions() {
  awk '
    /^[[:space:]]*#/ && cont == "" { next }
    {
      line = $0
      if (sub(/\\[[:space:]]*$/, "", line)) { cont = cont line " "; next }
      line = cont line; cont = ""
      if (line ~ /^[[:space:]]*$/) next
      print line
    }' "$dockerfile"
}
INSTR=$(instructions)

# stage N: the instructions of stage N (1-based), FROM line included.
stage() {
  awk -v want="$1" 'toupper($1) == "FROM" { n++ } n == want' <<<"$INSTR"
}
STAGES=$(grep -ci '^[[:space:]]*FROM ' <<<"$INSTR" || true)
BUILD_STAGE=$(stage 1)
RUNTIME_STAGE=$(stage "$STAGES")

# Packages named by `apt-get install` in a stage's RUN lines.
installed_by() {
  local text=${1//;/$'\n'}
  text=${text//&/$'\n'}
  awk '
    /apt-get( [^ ]+)* install/ {
      seen = 0
      for (i = 1; i <= NF; i++) {
        if (seen && $i !~ /^-/) print $i
        if ($i == "install") seen = 1
      }
    }' <<<"$text" | sort -u
}
BUILD_PKGS=$(installed_by "$BUILD_STAGE")
RUNTIME_PKGS=$(installed_by "$RUNTIME_STAGE")

first_word_after() { awk -v k="$1" 'toupper($1) == k { print $2; exit }' <<<"$2"; }

check "two stages" [ "$STAGES" = 2 ]
check "the build stage is FROM debian:12" [ "$(first_word_after FROM "$BUILD_STAGE")" = debian:12 ]
check "the runtime stage is FROM debian:12-slim" \
  [ "$(first_word_after FROM "$RUNTIME_STAGE")" = debian:12-slim ]
check "the runtime stage runs as 65532:65532" \
  [ "$(first_word_after USER "$RUNTIME_STAGE")" = 65532:65532 ]
copies_both() {
  local copy
  copy=$(grep -i '^COPY --from=' <<<"$RUNTIME_STAGE" || true)
  grep -q 'karpenter-controller' <<<"$copy" && grep -q 'karpenter-webhook' <<<"$copy"
}
check "the runtime stage copies both binaries from the build stage" copies_both
check "the build stage builds with the repository's CMake" grep -q 'cmake -S \. -B' <<<"$BUILD_STAGE"
check "the runtime stage installs packages ($(tr '\n' ' ' <<<"$RUNTIME_PKGS"))" [ -n "$RUNTIME_PKGS" ]

# ---------------------------------------------------------------- dpkg helpers

# The package that owns FILE (merged /usr: try the path as given, resolved, and
# with or without /usr), or nothing.
owner() {
  local f="$1" c
  for c in "$f" "$(readlink -f "$f")" "${f#/usr}" "/usr$f"; do
    [ -n "$c" ] || continue
    dpkg -S "$c" 2>/dev/null | head -n 1 | cut -d: -f1 && return 0
  done
  return 0
}

is_installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

# The first installed alternative of each dependency of package $1.
depends_of() {
  dpkg-query -W -f='${Pre-Depends}, ${Depends}\n' "$1" 2>/dev/null | tr ',' '\n' |
    while IFS= read -r alt; do
      local a name
      IFS='|' read -r -a alts <<<"$alt"
      for a in "${alts[@]}"; do
        name=$(sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g' <<<"$a")
        [ -n "$name" ] || continue
        if is_installed "$name"; then
          echo "$name"
          break
        fi
      done
    done | sort -u
}

declare -A CLOSURE=()
# closure PKG...: adds the packages and everything they depend on to CLOSURE.
closure() {
  local queue=("$@") p d
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [ -z "${CLOSURE[$p]:-}" ] || continue
    CLOSURE[$p]=1
    for d in $(depends_of "$p"); do
      [ -n "${CLOSURE[$d]:-}" ] || queue+=("$d")
    done
  done
}

# The slim base: Essential and required packages and what they need.
mapfile -t BASE_ROOTS < <(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' |
  awk '$2 == "yes" || $3 == "required" { print $1 }')
closure "${BASE_ROOTS[@]}"
declare -A BASE=()
for p in "${!CLOSURE[@]}"; do BASE[$p]=1; done
CLOSURE=()
# shellcheck disable=SC2086 # one package per word
closure $RUNTIME_PKGS
for p in "${!BASE[@]}"; do CLOSURE[$p]=1; done

# ---------------------------------------------------------------- the build stage

while read -r module; do
  pc="$(pkg-config --variable=pcfiledir "$module" 2>/dev/null)/$module.pc"
  pkg=$(owner "$pc")
  if [ -z "$pkg" ]; then
    bad "pkg-config module $module: no package owns $pc"
  else
    check "the build stage installs $pkg (pkg-config $module)" grep -qx "$pkg" <<<"$BUILD_PKGS"
  fi
done < <(sed -n 's/.*pkg_check_modules([A-Z0-9_]* REQUIRED IMPORTED_TARGET \([^ )]*\)).*/\1/p' "$src/CMakeLists.txt")

# ---------------------------------------------------------------- the libraries

is_sanitizer() { [[ "$1" =~ ^lib(asan|ubsan|lsan|tsan)\.so ]]; }

# Direct libraries: named in the runtime stage (or in the base).
for b in "${bins[@]}"; do
  while read -r lib; do
    if is_sanitizer "$lib"; then
      echo "skip - $(basename "$b"): $lib (sanitizer runtime, not in a release image)"
      continue
    fi
    path=$(ldd "$b" | awk -v l="$lib" '$1 == l { print $3 }')
    pkg=$(owner "$path")
    if [ -z "$pkg" ]; then
      bad "$(basename "$b"): $lib ($path) belongs to no Debian package"
    elif [ -n "${BASE[$pkg]:-}" ]; then
      ok "$(basename "$b"): $lib comes with debian:12-slim ($pkg)"
    else
      check "$(basename "$b"): $lib: the runtime stage installs $pkg" grep -qx "$pkg" <<<"$RUNTIME_PKGS"
    fi
  done < <(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done

# Every library ldd resolves: from the runtime packages' closure or the base.
missing=()
count=0
while read -r lib path; do
  if is_sanitizer "$lib"; then continue; fi
  count=$((count + 1))
  pkg=$(owner "$path")
  if [ -z "$pkg" ] || [ -z "${CLOSURE[$pkg]:-}" ]; then
    missing+=("$lib (${pkg:-no package})")
  fi
done < <(ldd "${bins[@]}" | awk '/=>/ && $3 ~ /^\// { print $1, $3 }' | sort -u)
if [ ${#missing[@]} -eq 0 ]; then
  ok "all $count libraries ldd resolves are installed by the runtime stage or its base"
else
  bad "libraries the runtime stage does not provide: ${missing[*]}"
fi
not_found=$(ldd "${bins[@]}" | grep -c 'not found' || true)
check "ldd finds every library here" [ "$not_found" = 0 ]

# ---------------------------------------------------------------- the context

ignores() { grep -qx "$1" "$src/.dockerignore"; }
check ".dockerignore leaves out .git" ignores .git
check ".dockerignore leaves out build trees" ignores 'build-\*'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
