#!/usr/bin/env bash
# The CustomResourceDefinitions in crds/ (and the C tables generated with
# them, shared/api/crd_tables.[ch]): generated and up to date, structural
# the way an apiextensions.k8s.io/v1 API server checks them, defaults valid for
# their own schemas, the printer columns and subresources users rely on, and a
# compat-1.20 variant with nothing a Kubernetes 1.20 API server (or kubectl's
# client-side validation against it) does not know.
#
#   test_crds.sh BUILD_DIR SOURCE_DIR
#
# With KP_CRDS_KUBECONFIG set to a cluster's kubeconfig, the variant for that
# cluster's version is also applied there with --dry-run=server (kubectl needs a
# server even for client dry runs, so that part is optional).
set -euo pipefail
src=$2
passed=0 failed=0

check() { # NAME COMMAND... : run, count
  local name=$1
  shift
  if "$@"; then
    passed=$((passed + 1))
    echo "ok   $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name"
  fi
}

generated_and_current() { python3 "$src/scripts/gen-crds.py" --check; }

# The C tables (shared/api/crd_tables.[ch]) are checked with the CRDs: in a
# copy of the generator's inputs and outputs, a hand edit to either file makes
# --check fail, naming the file and the command that rewrites it.
stale_c_tables_caught() {
  local tmp rc=0 f out
  tmp=$(mktemp -d)
  mkdir -p "$tmp/scripts" "$tmp/shared/api"
  cp "$src/scripts/gen-crds.py" "$tmp/scripts/"
  cp -r "$src/crds" "$tmp/crds"
  for f in crd_tables.h crd_tables.c; do
    cp "$src/shared/api/crd_tables.h" "$src/shared/api/crd_tables.c" "$tmp/shared/api/"
    echo "/* edited by hand */" >>"$tmp/shared/api/$f"
    if out=$(python3 "$tmp/scripts/gen-crds.py" --check 2>&1); then
      echo "  --check passed with shared/api/$f edited by hand"
      rc=1
    elif ! grep -q "out of date (run scripts/gen-crds.py): shared/api/$f" <<<"$out"; then
      echo "  unexpected message: $out"
      rc=1
    fi
  done
  rm -rf "$tmp"
  return $rc
}

# Each check is a small Python function over the loaded CRDs; the name picks it.
structure() {
  python3 - "$src/crds" "$1" <<'PY'
import os, re, sys, yaml

root, which = sys.argv[1], sys.argv[2]
KNOWN_1_20 = {
    "type", "format", "description", "properties", "items", "required", "enum", "pattern",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "default",
    "additionalProperties", "anyOf", "allOf", "oneOf", "not", "nullable", "title",
    "multipleOf", "example", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
}
FILES = ["karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml",
         "karpenter.k8s.aws_ec2nodeclasses.yaml", "autoscaling.x-k8s.io_capacitybuffers.yaml",
         "karpenter.sh_nodeoverlays.yaml"]
VERSIONS = {"karpenter.sh_nodeoverlays.yaml": "v1alpha1",  # the rest are v1
            "autoscaling.x-k8s.io_capacitybuffers.yaml": "v1beta1"}
errors = []


def load(variant):
    out = {}
    for name in FILES:
        path = os.path.join(root, variant, name) if variant else os.path.join(root, name)
        docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
        if len(docs) != 1:
            errors.append("%s: %d documents" % (path, len(docs)))
            continue
        out[name] = docs[0]
    return out


def walk(node, path, fn):
    fn(node, path)
    for key in ("properties",):
        for k, v in (node.get(key) or {}).items():
            walk(v, path + "." + k, fn)
    if isinstance(node.get("items"), dict):
        walk(node["items"], path + "[]", fn)
    if isinstance(node.get("additionalProperties"), dict):
        walk(node["additionalProperties"], path + "{}", fn)


def structural(node, path):
    special = node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    if "type" not in node and not special:
        errors.append("%s: no type" % path)
    if "properties" in node and "additionalProperties" in node:
        errors.append("%s: properties and additionalProperties" % path)
    for alt in node.get("anyOf", []):
        if set(alt) - {"type"}:
            errors.append("%s: anyOf branches may only name a type" % path)
    keys = node.get("x-kubernetes-list-map-keys")
    if keys:
        item = node["items"]
        for k in keys:
            if k not in item.get("required", []) and "default" not in item["properties"][k]:
                errors.append("%s: list-map key %s neither required nor defaulted" % (path, k))


def value_ok(schema, value, path):
    """The default `value` satisfies `schema` (types, enums, patterns, bounds)."""
    t = schema.get("type")
    checks = {"string": str, "boolean": bool, "object": dict, "array": list}
    if t == "integer" and not (isinstance(value, int) and not isinstance(value, bool)):
        errors.append("%s: default %r is not an integer" % (path, value))
    elif t in checks and not isinstance(value, checks[t]):
        errors.append("%s: default %r is not a %s" % (path, value, t))
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: default %r not in enum" % (path, value))
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        errors.append("%s: default %r does not match its pattern" % (path, value))
    for bound, ok in (("minimum", lambda v, b: v >= b), ("maximum", lambda v, b: v <= b)):
        if bound in schema and isinstance(value, int) and not ok(value, schema[bound]):
            errors.append("%s: default %r outside %s" % (path, value, bound))
    if isinstance(value, dict):
        for k, v in value.items():
            sub = (schema.get("properties") or {}).get(k)
            if sub is None:
                errors.append("%s: default has unknown field %s" % (path, k))
            else:
                value_ok(sub, v, path + "." + k)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, v in enumerate(value):
            value_ok(schema["items"], v, "%s[%d]" % (path, i))


def defaults(node, path):
    if "default" in node:
        value_ok(node, node["default"], path)


def known_fields(allow_cel):
    def fn(node, path):
        extra = set(node) - KNOWN_1_20 - ({"x-kubernetes-validations"} if allow_cel else set())
        if extra:
            errors.append("%s: fields unknown to Kubernetes 1.20: %s" % (path, sorted(extra)))
    return fn


def schema_of(crd):
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def count_cel(node):
    if isinstance(node, dict):
        return len(node.get("x-kubernetes-validations", [])) + sum(count_cel(v) for v in node.values())
    if isinstance(node, list):
        return sum(count_cel(v) for v in node)
    return 0


def strip_cel(node):
    if isinstance(node, dict):
        return {k: strip_cel(v) for k, v in node.items() if k != "x-kubernetes-validations"}
    if isinstance(node, list):
        return [strip_cel(v) for v in node]
    return node


full, compat = load(""), load("compat-1.20")
if which == "shape":
    for variant in (full, compat):
        for name, crd in variant.items():
            group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
            if crd["apiVersion"] != "apiextensions.k8s.io/v1" or crd["kind"] != "CustomResourceDefinition":
                errors.append("%s: not an apiextensions.k8s.io/v1 CRD" % name)
            if crd["metadata"]["name"] != "%s.%s" % (plural, group) or name != "%s_%s.yaml" % (group, plural):
                errors.append("%s: name does not match %s.%s" % (name, plural, group))
            versions = crd["spec"]["versions"]
            version = VERSIONS.get(name, "v1")
            if [(v["name"], v["served"], v["storage"]) for v in versions] != [(version, True, True)]:
                errors.append("%s: expected one served storage version %s" % (name, version))
            scope = "Namespaced" if group == "autoscaling.x-k8s.io" else "Cluster"
            if schema_of(crd).get("type") != "object" or crd["spec"]["scope"] != scope:
                errors.append("%s: schema root must be an object, scope %s" % (name, scope))
            if "status" not in versions[0].get("subresources", {}):
                errors.append("%s: no status subresource" % name)
elif which == "structural":
    for variant in (full, compat):
        for name, crd in variant.items():
            walk(schema_of(crd), name, structural)
elif which == "defaults":
    for name, crd in full.items():
        walk(schema_of(crd), name, defaults)
elif which == "columns":
    want = {"karpenter.sh_nodepools.yaml": ["NodeClass", "Nodes", "Ready", "Age"],
            "karpenter.sh_nodeclaims.yaml": ["Type", "Capacity", "Zone", "Node", "Ready", "Age"],
            "karpenter.k8s.aws_ec2nodeclasses.yaml": ["Ready", "Age"],
            "autoscaling.x-k8s.io_capacitybuffers.yaml": [
                "Strategy", "PodTemplate", "Replicas", "ConditionsType", "ConditionsStatus",
                "ConditionsReason", "Age"],
            "karpenter.sh_nodeoverlays.yaml": ["Ready", "Age"]}
    for name, crd in full.items():
        cols = [c["name"] for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]
                if not c.get("priority")]
        if cols != want[name]:
            errors.append("%s: default columns %s, want %s" % (name, cols, want[name]))
    scale = full["karpenter.sh_nodepools.yaml"]["spec"]["versions"][0]["subresources"].get("scale")
    if scale != {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.nodes"}:
        errors.append("nodepools: scale subresource %r" % scale)
elif which == "compat":
    for name in FILES:
        walk(schema_of(compat[name]), "compat-1.20/" + name, known_fields(False))
        walk(schema_of(full[name]), name, known_fields(True))
        if count_cel(compat[name]) != 0:
            errors.append("compat-1.20/%s: has CEL rules" % name)
        if count_cel(full[name]) == 0:
            errors.append("%s: has no CEL rules" % name)
        if strip_cel(full[name]) != compat[name]:
            errors.append("%s: compat-1.20 differs by more than the CEL rules" % name)
elif which == "descriptions":
    # Every field says what it is for; that text is ours.
    def described(node, path):
        if "description" not in node and path.count(".") > 0 and not path.endswith("{}") \
                and not path.endswith(".metadata") and not path.endswith("[]"):
            errors.append("%s: no description" % path)
    for name, crd in full.items():
        walk(schema_of(crd), name, described)
for e in errors:
    print("   " + e)
sys.exit(1 if errors else 0)
PY
}

live() {
  local minor variant
  minor=$(KUBECONFIG=$KP_CRDS_KUBECONFIG kubectl version -o json | python3 -c \
    'import json,sys; print(int("".join(c for c in json.load(sys.stdin)["serverVersion"]["minor"] if c.isdigit())))')
  variant="$src/crds"
  [ "$minor" -ge 25 ] || variant="$src/crds/compat-1.20"
  KUBECONFIG=$KP_CRDS_KUBECONFIG kubectl apply --dry-run=server -f "$variant" >/dev/null
}

if ! python3 -c 'import yaml' 2>/dev/null; then
  echo "FAIL python3 cannot import yaml (Debian: python3-yaml)"
  exit 1
fi
check "generated by scripts/gen-crds.py and up to date (CRDs and shared/api/crd_tables.[ch])" generated_and_current
check "a hand-edited C table fails --check, which says to run scripts/gen-crds.py" stale_c_tables_caught
check "one CRD per file (v1, cluster-scoped; CapacityBuffer v1beta1, namespaced), with a status subresource" structure shape
check "structural schemas (types everywhere, int-or-string, list-map keys)" structure structural
check "defaults satisfy their own schemas" structure defaults
check "printer columns and the NodePool scale subresource" structure columns
check "compat-1.20 is the full variant without CEL, and only 1.20 fields" structure compat
check "every field has a description" structure descriptions
if [ -n "${KP_CRDS_KUBECONFIG:-}" ]; then
  check "applies to the cluster (server dry run)" live
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
