#!/usr/bin/env bash
# karpenter-controller simulate --disrupt, driven as a user would: the
# disruption plan of example clusters (tests/integration/data/disrupt, priced
# by its types.json) as JSON, YAML and table, the clock fixed with --now, and
# clear errors for bad input.
#   test_simulate_disrupt.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
bin="$build/karpenter-controller"
data="$src/tests/integration/data/disrupt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

check() { # NAME COMMAND... : run, count
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"; else failed=$((failed + 1)); echo "FAIL $name"; fi
}

# disrupt CLUSTER NOW [ARGS...]: the plan of data/CLUSTER.yaml at NOW, on standard output.
disrupt() {
  local cluster=$1 now=$2; shift 2
  "$bin" simulate -f "$data/$cluster.yaml" --instance-types "$data/types.json" --disrupt --now "$now" "$@"
}

# assert_json FILE PYTHON: run PYTHON with `d` the parsed FILE; it fails by
# raising (assert). Prints what was wrong.
assert_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
def methods(): return [c["method"] for c in d["disruption"]]
def blocked(): return {b["node"]: b["reason"] for b in d["blocked"]}
def near(a, b): return abs(a - b) < 1e-6
try:
    exec(sys.argv[2])
except AssertionError as e:
    print("  assertion failed:", e or sys.argv[2].strip().splitlines()[-1], file=sys.stderr)
    print("  disruption:", json.dumps(d.get("disruption"))[:2000], file=sys.stderr)
    print("  blocked:", json.dumps(d.get("blocked")), file=sys.stderr)
    sys.exit(1)
PY
}

NOON=2026-11-21T12:00:00Z

underutilized_merges() {
  disrupt underutilized $NOON >"$tmp/u.json" && assert_json "$tmp/u.json" '
assert methods() == ["multi-node consolidation"], methods()
c = d["disruption"][0]
assert c["reason"] == "Underutilized" and c["loop"] == 0
# batch (12 CPUs) and two of the xlarge nodes fit on the third xlarge
assert sorted(c["candidates"]) == ["batch", "web-1", "web-2"], c["candidates"]
assert c["replacements"] == []
assert near(c["savingsHourly"], 1.6 + 0.8 + 0.8), c["savingsHourly"]
assert list(blocked()) == ["web-3"], blocked()
assert blocked()["web-3"].startswith("no cheaper replacement"), blocked()
'
}

lifecycle_in_order() {
  disrupt lifecycle $NOON >"$tmp/l.json" && assert_json "$tmp/l.json" '
assert methods() == ["expiration", "emptiness", "drift"], methods()
assert [c["reason"] for c in d["disruption"]] == ["Expired", "Empty", "Drifted"]
# one loop holds all three (the controller runs them in parallel); expiration
# is forceful, and the drift says why
assert [c["loop"] for c in d["disruption"]] == [0, 0, 0]
assert [c["forceful"] for c in d["disruption"]] == [True, False, False]
assert [c["decision"] for c in d["disruption"]] == ["replace", "delete", "replace"]
assert d["disruption"][2]["driftReason"] == "NodePoolDrifted", d["disruption"][2]
assert [c["candidates"] for c in d["disruption"]] == [["expired"], ["empty"], ["drifted"]]
assert [len(c["replacements"]) for c in d["disruption"]] == [1, 0, 1]
# the expired and drifted nodes are replaced by their own type: nothing saved
for i in (0, 2):
    r = d["disruption"][i]["replacements"][0]
    assert r["launch"]["instanceType"] == "large", r["launch"]
    assert r["pods"] == ["default/%s-a" % d["disruption"][i]["candidates"][0]], r["pods"]
    assert near(d["disruption"][i]["savingsHourly"], 0), d["disruption"][i]
assert near(d["disruption"][1]["savingsHourly"], 0.1)
assert blocked()["recent"] == "consolidateAfter has not elapsed (until 2026-11-21T12:30:00Z)", blocked()
'
}

now_moves_the_clock() {
  disrupt lifecycle 2026-11-21T13:00:00Z >"$tmp/l13.json" && assert_json "$tmp/l13.json" '
assert methods() == ["expiration", "emptiness", "drift", "single-node consolidation"], methods()
c = d["disruption"][3]
assert c["candidates"] == ["recent"] and len(c["replacements"]) == 1, c
assert c["replacements"][0]["launch"]["instanceType"] == "small"
assert near(c["savingsHourly"], 0.8 - 0.1), c["savingsHourly"]
assert "recent" not in blocked(), blocked()
# the replacements launched at 13:00 wait for their own consolidateAfter
assert all(r == "consolidateAfter has not elapsed (until 2026-11-21T14:00:00Z)" for r in blocked().values()), blocked()
'
}

now_with_an_offset() {
  # 13:00 at +01:00 is noon UTC
  disrupt lifecycle 2026-11-21T13:00:00+01:00 >"$tmp/lo.json" && assert_json "$tmp/lo.json" '
assert methods() == ["expiration", "emptiness", "drift"], methods()
assert blocked()["recent"] == "consolidateAfter has not elapsed (until 2026-11-21T12:30:00Z)", blocked()
'
}

now_before_expiry() {
  # expireAfter 24h from 2026-11-19T08:00Z: not expired yet at 07:00 the next day
  disrupt lifecycle 2026-11-20T07:00:00Z >"$tmp/le.json" && assert_json "$tmp/le.json" '
assert "expiration" not in methods(), methods()
assert "expired" in blocked(), blocked()
'
}

protected_stays() {
  disrupt protected $NOON >"$tmp/p.json" && assert_json "$tmp/p.json" '
assert d["disruption"] == [], d["disruption"]
assert blocked() == {
    "guarded": "pod default/job has the karpenter.sh/do-not-disrupt annotation",
    "db": "PodDisruptionBudget default/db allows 0 disruptions (pod default/db-0)",
    "pinned": "disruption is blocked by the karpenter.sh/do-not-disrupt annotation on the node",
    "calm": "NodePool quiet consolidates only empty nodes (WhenEmpty)",
}, blocked()
'
}

on_demand_to_spot() {
  disrupt spot $NOON >"$tmp/s.json" && assert_json "$tmp/s.json" '
assert methods()[0] == "single-node consolidation", methods()
c = d["disruption"][0]
assert c["candidates"] == ["od"], c["candidates"]
r = c["replacements"][0]
assert r["launch"] == {"instanceType": "small", "zone": "zone-a", "capacityType": "spot"}, r["launch"]
ct = [q for q in r["requirements"] if q["key"] == "karpenter.sh/capacity-type"]
assert ct == [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}], ct
assert near(r["price"], 0.04) and near(c["savingsHourly"], 0.8 - 0.04), (r["price"], c["savingsHourly"])
assert blocked()["sp"] == "replacing spot with spot needs the SpotToSpotConsolidation feature", blocked()
'
}

consolidation_example() {
  "$bin" simulate -f "$src/examples/consolidation" --disrupt --now $NOON >"$tmp/e.json" && assert_json "$tmp/e.json" '
assert methods()[0] == "emptiness" and d["disruption"][0]["candidates"] == ["node-c"], d["disruption"][0]
assert all(c["savingsHourly"] > 0 for c in d["disruption"])
assert "do-not-disrupt" in blocked()["node-d"] and "PodDisruptionBudget" in blocked()["node-e"], blocked()
'
}

split_and_balanced_example() {
  "$bin" simulate -f "$src/examples/split-and-balanced" --disrupt --now $NOON >"$tmp/sb.json" && assert_json "$tmp/sb.json" '
cmds = {c["candidates"][0]: c for c in d["disruption"]}
assert sorted(cmds) == ["steady-big", "web-1"] and all(c["loop"] == 0 for c in d["disruption"]), methods()
# split: one node for three cheaper ones, whatever their launches pick
web = cmds["web-1"]
assert web["method"] == "single-node consolidation" and web["decision"] == "replace", web
assert len(web["replacements"]) == 3 and web["savingsHourly"] > 0, web
assert sum(r["price"] for r in web["replacements"]) < 0.384, web["replacements"]
# Balanced approves the oversized node, with Karpenter event text
big = cmds["steady-big"]
s = big["scores"][0]
assert s["policy"] == "Balanced" and s["approved"] and s["eventReason"] == "ConsolidationApproved", s
assert s["message"] == "score 5.69 >= threshold 0.50 (k: 2, savings 35.6%, disruption 6.2%)", s
# ...and refuses the busy one
b = {x["node"]: x for x in d["blocked"]}
busy = b["steady-busy"]
assert busy["kind"] == "BalancedScore" and "eventReason" not in busy, busy  # Karpenter: metrics only
assert busy["score"]["message"].startswith("score 0.19 < threshold 0.50 (k: 2,"), busy
assert not busy["score"]["approved"], busy
full = b["steady-full-1"]
assert full["kind"] == "NodeDoNotDisrupt" and full["eventReason"] == "DisruptionBlocked", full
assert full["message"] == "Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation", full
'
}

balanced_off_the_busy_node_goes() {
  sed 's/consolidationPolicy: Balanced/consolidationPolicy: WhenEmptyOrUnderutilized/' \
    "$src/examples/split-and-balanced/cluster.yaml" >"$tmp/wu.yaml" &&
    "$bin" simulate -f "$tmp/wu.yaml" --disrupt --now $NOON >"$tmp/wu.json" && assert_json "$tmp/wu.json" '
assert any("steady-busy" in c["candidates"] for c in d["disruption"]), methods()
assert all("scores" not in c or not any(s.get("score") for s in c["scores"]) for c in d["disruption"])
'
}

table_output() {
  disrupt lifecycle $NOON -o table >"$tmp/l.txt" &&
    grep -qE '^LOOP +DISRUPTION +REASON +NODES +\$/HOUR SAVED' "$tmp/l.txt" &&
    grep -qE '^0 +expiration +Expired +expired -> 1 new +0\.0000$' "$tmp/l.txt" &&
    grep -qE '^0 +emptiness +Empty +empty +0\.1000$' "$tmp/l.txt" &&
    grep -qE '^0 +drift +Drifted +drifted -> 1 new +0\.0000$' "$tmp/l.txt" &&
    grep -qE '^NODE KEPT +WHY' "$tmp/l.txt" &&
    grep -qE '^recent +consolidateAfter has not elapsed \(until 2026-11-21T12:30:00Z\)$' "$tmp/l.txt" &&
    grep -qF 'Managed nodes cost $1.7000/hour now and $1.6000/hour after 3 disruption(s).' "$tmp/l.txt"
}

table_without_commands() {
  disrupt protected $NOON -o table >"$tmp/p.txt" &&
    grep -qF 'Managed nodes cost $3.2000/hour now and $3.2000/hour after 0 disruption(s).' "$tmp/p.txt" &&
    [ "$(grep -cE '^(guarded|db|pinned|calm) ' "$tmp/p.txt")" = 4 ]
}

yaml_output() {
  disrupt lifecycle $NOON -o yaml >"$tmp/l.yaml" &&
    grep -q '^disruption:' "$tmp/l.yaml" && grep -q '^blocked:' "$tmp/l.yaml" &&
    grep -q 'method: expiration' "$tmp/l.yaml"
}

json_is_the_same_plan_twice() {
  disrupt underutilized $NOON >"$tmp/a.json" && disrupt underutilized $NOON >"$tmp/b.json" &&
    python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for d in (a, b):
    d["summary"].pop("solveMillis", None)
assert a["disruption"] == b["disruption"] and a["blocked"] == b["blocked"]
' "$tmp/a.json" "$tmp/b.json"
}

without_disrupt_no_plan() {
  "$bin" simulate -f "$data/lifecycle.yaml" --instance-types "$data/types.json" --now $NOON >"$tmp/n.json" &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "disruption" not in d and "blocked" not in d' \
      "$tmp/n.json"
}

bad_now() {
  local rc=0
  disrupt lifecycle yesterday >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] && grep -q -- '--now' "$tmp/err" && grep -q 'yesterday' "$tmp/err" && grep -q 'RFC 3339' "$tmp/err"
}

bad_now_date() {
  local rc=0
  disrupt lifecycle 2026-13-45T00:00:00Z >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] && grep -q -- '--now' "$tmp/err"
}

missing_now_value() {
  local rc=0
  "$bin" simulate -f "$data/lifecycle.yaml" --disrupt --now >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 2 ] && [ -s "$tmp/err" ]
}

missing_file() {
  local rc=0
  "$bin" simulate -f "$tmp/nope.yaml" --disrupt --now $NOON >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 1 ] && grep -q 'nope.yaml' "$tmp/err"
}

bad_manifest_field() {
  sed 's/consolidateAfter: 1h/consolidateAfter: soon/' "$data/lifecycle.yaml" >"$tmp/bad.yaml"
  local rc=0
  "$bin" simulate -f "$tmp/bad.yaml" --instance-types "$data/types.json" --disrupt --now $NOON \
    >/dev/null 2>"$tmp/err" || rc=$?
  [ $rc = 1 ] && grep -q 'bad.yaml: document 1' "$tmp/err" && grep -q 'spec.disruption.consolidateAfter' "$tmp/err"
}

check "underutilized: three nodes onto the fourth (multi-node)" underutilized_merges
check "lifecycle: expiration, emptiness, drift in order" lifecycle_in_order
check "--now later: consolidateAfter has elapsed" now_moves_the_clock
check "--now with a UTC offset" now_with_an_offset
check "--now before expireAfter: not expired" now_before_expiry
check "protected: every node kept, each with its reason" protected_stays
check "spot: on-demand replaced by spot, spot kept" on_demand_to_spot
check "examples/consolidation" consolidation_example
check "examples/split-and-balanced: a split, Balanced approves and refuses" split_and_balanced_example
check "the same under WhenEmptyOrUnderutilized: the busy node goes" balanced_off_the_busy_node_goes
check "-o table: commands, kept nodes, cost" table_output
check "-o table with nothing to do" table_without_commands
check "-o yaml carries disruption and blocked" yaml_output
check "the same input gives the same plan" json_is_the_same_plan_twice
check "without --disrupt: no disruption plan" without_disrupt_no_plan
check "bad --now: usage error naming the flag" bad_now
check "impossible --now date: usage error" bad_now_date
check "--now without a value: usage error" missing_now_value
check "missing input: exit 1 naming the path" missing_file
check "bad manifest field: exit 1 naming file and field" bad_manifest_field
echo "test_simulate_disrupt: $passed passed, $failed failed"
[ "$failed" = 0 ]
