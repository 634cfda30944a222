#!/usr/bin/env bash
# scripts/demo.sh (make demo) run to the end without a screen: it starts its own
# control plane, webhook and controller, provisions examples/nginx, consolidates
# after the scale-down, exits 0 and removes everything it started.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
readonly ROOT="$HERE/../.."
readonly DEMO_LIMIT="${KP_DEMO_TIMEOUT:-420}"

# No e2e_setup: the demo brings its own cluster. Its directory goes under the run's
# work directory, so run.sh's stray check sees anything it leaves running.
trap e2e_finish EXIT
work="${KP_E2E_WORK_DIR:-${TMPDIR:-/tmp}}"
log=$(mktemp "$work/demo.XXXXXX.log")
e2e_cleanup rm -f "$log"

rc=0
TMPDIR="$work" DEMO_NONINTERACTIVE=1 BUILD="${KP_BUILD_DIR:-$ROOT/build}" \
  timeout -k 30 "$DEMO_LIMIT" "$ROOT/scripts/demo.sh" >"$log" 2>&1 || rc=$?
sed 's/^/    | /' "$log"

assert "the demo exited 0 (status $rc)" test "$rc" -eq 0
has() { grep -aq -- "$1" "$log"; }
check "the control plane came up" has 'demo: control plane up in'
check "the webhook was registered and served" has 'demo: karpenter-webhook on https://127.0.0.1:'
check "the controller ran" has 'demo: karpenter-controller running (kwok provider)'
check "examples/nginx was applied" has 'examples/nginx/deployment.yaml (10 pods x 500m)'
check "a status line was shown" has 'pods: [0-9]* bound, [0-9]* pending, [0-9]* running  nodeclaims: '
check "all 10 pods ran" has 'demo: all 10 pods running after'
check "the NodePool was opened to consolidation" has 'demo: patched NodePool default: consolidateAfter 0s'
check "the Deployment was scaled to 2" has 'demo: scaled deployment inflate to 2 replicas'
check "consolidation removed a node" has 'demo: consolidated after'
check "at least one disruption decision counted" grep -aq 'disruption decisions: [1-9]' "$log"
check "the webhook answered admission requests" grep -aq 'the webhook answered [1-9][0-9]* admission requests' "$log"
check "the demo said it was complete" has 'demo: demo complete'
check "the cluster was removed" has 'demo: cluster removed'
dir=$(sed -n 's/^demo: starting a Kubernetes [^ ]* control plane in \([^ ]*\) .*/\1/p' "$log")
check "its directory ($dir) is gone" test -n "$dir" -a ! -e "$dir"

# Interrupted in the middle (as Ctrl-C or a SIGTERM would): everything it started
# stops and the cluster directory goes.
log2=$(mktemp "$work/demo-term.XXXXXX.log")
e2e_cleanup rm -f "$log2"
TMPDIR="$work" BUILD="${KP_BUILD_DIR:-$ROOT/build}" "$ROOT/scripts/demo.sh" >"$log2" 2>&1 &
demo_pid=$!
e2e_cleanup e2e_stop_pid "$demo_pid"
wait_for "grep -aq 'demo: all 10 pods running' '$log2'" 300 || fail "the interactive demo did not provision"
dir=$(sed -n 's/^demo: starting a Kubernetes [^ ]* control plane in \([^ ]*\) .*/\1/p' "$log2")
kill -TERM "$demo_pid"
rc=0
wait "$demo_pid" || rc=$?
sed 's/^/    | /' "$log2" | tail -n 40
check "SIGTERM ends the demo with status 143 (got $rc)" test "$rc" -eq 143
check "the interrupted demo removed its cluster" grep -aq 'demo: cluster removed' "$log2"
check "its directory ($dir) is gone" test -n "$dir" -a ! -e "$dir"
check "no process of the demo is left" test -z "$(pgrep -f -- "$dir/" || true)"
