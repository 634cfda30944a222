#!/usr/bin/env bash
# The C files listed in scripts/formatted-files.txt are formatted as the
# repository's .clang-format says (clang-format --dry-run -Werror), so the list
# only grows: format a file (clang-format -i FILE) and add it. A listed file
# that no longer exists fails too, so the list stays true.
#
#   test_format.sh BUILD_DIR SOURCE_DIR
#
# The files not listed yet are counted, and the ones that would already pass
# are named, as candidates for the list.
set -euo pipefail
src=$2
cd "$src"

if ! command -v clang-format >/dev/null; then
  echo "FAIL clang-format is not installed (scripts/install-deps.sh build installs it)"
  exit 1
fi
echo "using $(clang-format --version)"

# unformatted FILE...: the files clang-format would change, one a line.
unformatted() {
  [ $# -gt 0 ] || return 0
  clang-format --style=file --dry-run "$@" 2>&1 | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: warning:.*/\1/p' | sort -u
}

mapfile -t listed < <(grep -v -e '^#' -e '^$' scripts/formatted-files.txt)
failed=0 missing=0
for f in "${listed[@]}"; do
  if [ ! -f "$f" ]; then
    missing=$((missing + 1))
    echo "FAIL $f is listed but does not exist: take it off the list"
  fi
done
existing=()
for f in "${listed[@]}"; do [ -f "$f" ] && existing+=("$f"); done
while IFS= read -r f; do
  [ -n "$f" ] || continue
  failed=$((failed + 1))
  echo "FAIL $f is not formatted (clang-format -i $f):"
  clang-format --style=file --dry-run "$f" 2>&1 | head -12
done < <(unformatted "${existing[@]}")

mapfile -t others < <(git ls-files '*.c' '*.h' | grep -vxF -f <(printf '%s\n' "${listed[@]}"))
mapfile -t dirty < <(unformatted "${others[@]}")
ready=$(printf '%s\n' "${others[@]}" | grep -vxF -f <(printf '%s\n' "${dirty[@]}" ""; echo) | tr '\n' ' ')
[ -n "$ready" ] && echo "already formatted, could be listed: $ready"

echo "format: $((${#existing[@]} - failed)) listed files formatted, $failed not, $missing missing;" \
  "${#others[@]} files not listed yet"
[ "$failed" -eq 0 ] && [ "$missing" -eq 0 ]
