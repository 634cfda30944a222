#!/usr/bin/env bash
# The end-to-end tier: every tests/e2e/test_*.sh (or the ones named on the command
# line), each against a real Kubernetes control plane (the release
# tests/e2e/k8s/go.mod pins; build-control-plane.sh builds and caches it).
#
#   tests/e2e/run.sh [test_name|path ...]
#
# Prints PASS/FAIL per test and "e2e: N passed, M failed"; exits 1 on any failure.
# A failed test's output is shown, and its cluster directory (component logs) kept.
#
# One fresh cluster per test, not one shared per run: an autoscaler's tests create
# cluster-scoped objects (Nodes, NodePools, CRDs, webhook configurations) that a
# namespace cannot hold, and our controllers watch all of them, so a leftover from one
# test would change what the next one sees. A cluster starts in about 10-15 s, which
# is cheap next to what each test does, and it makes tests independent of order.
#
# Tests may run side by side (KP_E2E_JOBS, default 1): each has its own cluster on
# ports of its own, and most of a test's time is spent waiting on the cluster, not
# computing, so running two at once shortens a run (docs/testing.md has figures). Each
# test's result and, on failure, its output are printed when it ends, as a block.
#
# Environment: KP_E2E_TEST_TIMEOUT (seconds per test, default 600), KP_E2E_JOBS (tests
# at once, default 1), KP_E2E_KEEP (non-empty: keep the logs of a run that passed).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly TEST_TIMEOUT="${KP_E2E_TEST_TIMEOUT:-600}"
readonly JOBS="${KP_E2E_JOBS:-1}"

say() { printf 'e2e: %s\n' "$*"; }

# Test paths from the arguments (names with or without test_ / .sh), or all of them.
select_tests() {
  local a
  if [ $# -eq 0 ]; then
    ls "$HERE"/test_*.sh
    return
  fi
  for a in "$@"; do
    a=$(basename "$a" .sh)
    a="$HERE/test_${a#test_}.sh"
    [ -f "$a" ] || { say "no such test: $a" >&2; exit 2; }
    printf '%s\n' "$a"
  done
}

# Processes whose command line names the run's work directory are cluster components
# a test failed to stop (e.g. it was SIGKILLed at the timeout). They count as a failure
# and are stopped here, by PID.
reap_strays() {
  local work="$1" pids
  pids=$(pgrep -f -- "$work/" || true)
  [ -n "$pids" ] || return 0
  say "stray processes left by tests:" >&2
  # shellcheck disable=SC2086 # one PID per word
  ps -o pid=,args= -p $pids | cut -c1-160 | sed 's/^/  /' >&2
  # shellcheck disable=SC2086
  kill -KILL $pids 2>/dev/null || true
  return 1
}

# test_timeout TEST: seconds TEST may run. A test that needs more than the default
# says so in a line "# e2e-timeout: SECONDS" (the longest, test_controller_aws,
# waits on AWS-side passes that run once a minute); KP_E2E_TEST_TIMEOUT, when set,
# applies to every test.
test_timeout() {
  local own
  own=$(sed -n 's/^# e2e-timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1)
  if [ -n "${KP_E2E_TEST_TIMEOUT:-}" ] || [ -z "$own" ]; then echo "$TEST_TIMEOUT"; else echo "$own"; fi
}

# run_one TEST LOG: PASS/FAIL line with the test's own summary and its time.
run_one() {
  local t="$1" log="$2" start rc=0 summary limit
  start=$SECONDS
  limit=$(test_timeout "$t")
  timeout -k 30 "$limit" bash "$t" >"$log" 2>&1 || rc=$?
  summary=$(tail -n 1 "$log")
  if [ "$rc" -eq 0 ]; then
    printf 'PASS  %-32s %4ds  (%s)\n' "$(basename "$t" .sh)" $((SECONDS - start)) "$summary"
    return 0
  fi
  [ "$rc" -ne 124 ] || summary="timed out after ${limit}s"
  printf 'FAIL  %-32s %4ds  (%s)\n' "$(basename "$t" .sh)" $((SECONDS - start)) "$summary"
  # The failed checks first, so they are seen even where only part of the output is.
  grep -a 'FAIL  ' "$log" | sed 's/^/      ! /' || true
  sed 's/^/      | /' "$log"
  return 1
}

# start_one TEST: run_one in the background, its block into WORK/NAME.out and its
# status into WORK/NAME.rc (written last: its presence means the test has ended).
start_one() {
  local name
  name=$(basename "$1" .sh)
  (
    rc=0
    run_one "$1" "$WORK/$name.log" >"$WORK/$name.out" 2>&1 || rc=$?
    echo "$rc" >"$WORK/$name.rc"
  ) &
}

# report_ended: print the block of each test that has ended since the last call, and
# count it.
report_ended() {
  local t name
  for t in "${STARTED[@]}"; do
    name=$(basename "$t" .sh)
    [ -f "$WORK/$name.rc" ] && [ ! -f "$WORK/$name.reported" ] || continue
    touch "$WORK/$name.reported"
    cat "$WORK/$name.out"
    if [ "$(cat "$WORK/$name.rc")" = 0 ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
  done
}

# running: how many started tests have not ended.
running() {
  local t n=0
  for t in "${STARTED[@]}"; do [ -f "$WORK/$(basename "$t" .sh).rc" ] || n=$((n + 1)); done
  echo "$n"
}

WORK=""
PASSED=0
FAILED=0
STARTED=()

main() {
  local tests t start
  mapfile -t tests < <(select_tests "$@")
  [ ${#tests[@]} -gt 0 ] || { say "no tests found in $HERE" >&2; exit 2; }
  [[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { say "KP_E2E_JOBS must be a positive number, not '$JOBS'" >&2; exit 2; }

  # Instant when cached; the first run on a machine builds (40 minutes or more on two
  # busy cores; it prints its progress). kubectl comes with it, the same release.
  start=$SECONDS
  "$HERE/build-control-plane.sh" >/dev/null || { say "the control plane could not be built" >&2; exit 2; }
  [ $((SECONDS - start)) -lt 5 ] || say "control plane built in $((SECONDS - start))s"
  say "Kubernetes $("$HERE/build-control-plane.sh" --version), $JOBS test(s) at a time"

  WORK=$(mktemp -d "${TMPDIR:-/tmp}/kp-e2e-run.XXXXXX")
  export KP_E2E_WORK_DIR="$WORK"
  start=$SECONDS
  for t in "${tests[@]}"; do
    while [ "$(running)" -ge "$JOBS" ]; do
      wait -n || true
      report_ended
    done
    STARTED+=("$t")
    start_one "$t"
  done
  wait
  report_ended
  reap_strays "$WORK" || FAILED=$((FAILED + 1))
  # Repeated at the end: a long run's log is often read from the bottom.
  for t in "${tests[@]}"; do
    grep -a 'FAIL  ' "$WORK/$(basename "$t" .sh).log" 2>/dev/null | sed "s/^/e2e: $(basename "$t" .sh): /" || true
  done

  if [ "$FAILED" -eq 0 ] && [ -z "${KP_E2E_KEEP:-}" ]; then
    rm -rf "$WORK"
  else
    say "logs kept in $WORK"
  fi
  say "tests took $((SECONDS - start))s"
  say "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}

main "$@"
