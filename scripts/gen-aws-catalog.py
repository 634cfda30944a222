#!/usr/bin/env python3
"""Generate shared/cloud/aws_catalog_data.c, the built-in AWS instance-type table.

Usage:
    scripts/gen-aws-catalog.py INSTANCE_TYPES_JSON PRICING_JSON [-o OUTPUT]

INSTANCE_TYPES_JSON holds one JSON object per instance type (a JSON array, one
element per line is fine): name, vcpu, memoryMiB, arch, hypervisor, gpus,
accelerators, defaultCardMaxENIs, ipv4PerENI, podENI, trunkingCompatible,
maxEFAInterfaces, networkBandwidthMbps, ebsBandwidthMbps, localNVMeGB,
cpuManufacturer, cpuSustainedClockSpeedMhz, encryptionInTransitSupported,
burstable, baremetal and, as a test oracle, docsAllocatableAL2023 (the
allocatable resources Karpenter publishes for AL2023 with default settings).
PRICING_JSON maps region -> instance type -> on-demand USD/hour; only
us-east-1 is read.

Before writing anything the script recomputes capacity and allocatable of every
selected type with Karpenter's formulas (VM overhead 0.075, no reserved ENIs,
AL2023, 20Gi root volume) and compares them with docsAllocatableAL2023: cpu,
memory, pods, ephemeral-storage and every extended resource. Any mismatch fails
generation (exit status 1) and nothing is written. The C implementation is
checked against the same figures by tests/unit/test_aws_allocatable.c.
"""

import argparse
import json
import math
import re
import sys
from decimal import Decimal

OUTPUT_DEFAULT = "shared/cloud/aws_catalog_data.c"
REGION = "us-east-1"

# Families in the table: the core set (current x86 and Graviton
# general purpose, compute and memory families, burstable, GPU) plus the
# common variants around them (a/d/n/flex/gd/gn), the newest Graviton
# generation and the accelerated families people schedule onto.
FAMILIES = """
    m5 m5a m5d m5n m5dn m5zn m6i m6id m6in m6a m6g m6gd m7i m7i-flex m7a m7g m7gd m8g m8gd
    c5 c5a c5d c5n c6i c6id c6in c6a c6g c6gd c6gn c7i c7i-flex c7a c7g c7gd c7gn c8g c8gd
    r5 r5a r5b r5d r5n r6i r6id r6a r6g r6gd r7i r7a r7g r7gd r8g r8gd
    t3 t3a t4g
    g4dn g4ad g5 g5g g6 g6e g6f gr6 p3 p3dn p4d p4de p5 p5e p5en
    inf1 inf2 trn1 trn1n
""".split()

# Karpenter's instance-type naming rule: category letters, an optional
# "-<n>tb" memory tag, then the generation digits.
NAME_SCHEME = re.compile(r"^([a-z]+)(-[0-9]+tb)?([0-9]+).*\.")

CORE = ("cpu", "memory", "pods", "ephemeral-storage")
MIB = 1 << 20
GIB = 1 << 30
VM_OVERHEAD = 0.075
ROOT_VOLUME = 20 * GIB

SUFFIXES = {"": 1, "m": Decimal("0.001"), "Ki": 1 << 10, "Mi": MIB, "Gi": GIB, "Ti": 1 << 40,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def load_types(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text)
    if not isinstance(data, list):
        raise SystemExit(f"{path}: expected a JSON array of instance types")
    return data


def parse_quantity(text):
    """A Kubernetes quantity as an exact Decimal of base units."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)", text)
    if not m or m.group(2) not in SUFFIXES:
        raise ValueError(f"unsupported quantity {text!r}")
    return Decimal(m.group(1)) * SUFFIXES[m.group(2)]


def kube_reserved_cpu(cpu_milli):
    bands = ((0, 1000, 6, 100), (1000, 2000, 1, 100), (2000, 4000, 5, 1000),
             (4000, 1 << 31, 25, 10000))
    total = 0
    for start, end, num, den in bands:
        if cpu_milli >= start:
            width = min(cpu_milli, end) - start
            total += width * num // den
    return total


def eni_limited_pods(t):
    enis = t["defaultCardMaxENIs"]
    if enis <= 0:
        return 0
    return enis * (t["ipv4PerENI"] - 1) + 2


def single(entries):
    return entries[0] if entries and len(entries) == 1 else None


def expected_resources(t):
    """Allocatable under Karpenter's defaults, as {resource name: int}."""
    mem_mib = t["memoryMiB"] - (64 if t["arch"] == "arm64" else 0)
    # Same float expression as the provider: bytes x fraction / 1024 / 1024.
    mem_mib -= math.ceil(float(mem_mib * MIB) * VM_OVERHEAD / 1024 / 1024)
    memory = mem_mib * MIB
    pods = eni_limited_pods(t)
    cpu = t["vcpu"] * 1000
    res = {
        "cpu": cpu - kube_reserved_cpu(cpu),
        "memory": memory - (11 * pods + 255) * MIB - 100 * MIB,
        "pods": pods,
        "ephemeral-storage": ROOT_VOLUME - GIB - math.ceil(ROOT_VOLUME / 100 * 10),
    }
    gpus = t["gpus"] or []
    for key, maker in (("nvidia.com/gpu", "nvidia"), ("amd.com/gpu", "amd"),
                       ("habana.ai/gaudi", "habana")):
        res[key] = sum(g["count"] for g in gpus if g["manufacturer"] == maker)
    neuron = [a for a in t["accelerators"] or [] if a.get("coresPerDevice")]
    res["aws.amazon.com/neuron"] = sum(a["count"] for a in neuron)
    res["aws.amazon.com/neuroncore"] = (neuron[0]["count"] * neuron[0]["coresPerDevice"]
                                        if neuron else 0)
    res["vpc.amazonaws.com/efa"] = t["maxEFAInterfaces"] or 0
    res["vpc.amazonaws.com/pod-eni"] = t["podENI"] if t["trunkingCompatible"] else 0
    return {k: v for k, v in res.items() if v != 0 or k in ("cpu", "memory", "pods")}


def check_allocatable(t):
    """Differences between our formulas and the published figures, as strings."""
    docs = t["docsAllocatableAL2023"]
    ours = expected_resources(t)
    problems = []
    for key in sorted(set(docs) | set(ours)):
        want = parse_quantity(docs[key]) if key in docs else Decimal(0)
        got = Decimal(ours.get(key, 0))
        if key == "cpu":
            got = got / 1000
        if want != got:
            problems.append(f"{t['name']} {key}: computed {got}, published {docs.get(key)}")
    return problems


def check_name_rules(t):
    problems = []
    parts = t["name"].split(".")
    if len(parts) != 2 or parts[0] != t["family"] or parts[1] != t["size"]:
        problems.append(f"{t['name']}: family/size {t['family']!r}/{t['size']!r}")
    m = NAME_SCHEME.match(t["name"])
    category = m.group(1) if m else ""
    generation = int(m.group(3)) if m else 0
    if category != (t["category"] or "") or generation != (t["generation"] or 0):
        problems.append(f"{t['name']}: category/generation {t['category']}/{t['generation']}")
    return problems


def usable(t, prices):
    """Why a type of a selected family cannot go into the table ('' if it can)."""
    if not t["vcpu"] or not t["memoryMiB"] or t["arch"] not in ("amd64", "arm64"):
        return "no vcpu/memory/arch facts"
    if t["defaultCardMaxENIs"] is None or t["ipv4PerENI"] is None or t["hypervisor"] is None:
        return "no ENI or hypervisor facts"
    if not t["docsAllocatableAL2023"]:
        return "no published allocatable to verify against"
    if t["name"] not in prices:
        return f"no {REGION} on-demand price"
    if len(t["gpus"] or []) > 1 or len(t["accelerators"] or []) > 1:
        return "more than one GPU or accelerator entry"
    return ""


def c_str(s):
    if s is None:
        return "NULL"
    if not re.fullmatch(r"[A-Za-z0-9 ._-]*", s):
        raise SystemExit(f"unexpected characters in {s!r}")
    return '"' + s + '"'


def micro_usd(price):
    micro = Decimal(repr(price)) * 1000000
    if micro != micro.to_integral_value() or micro <= 0:
        raise SystemExit(f"price {price} is not a positive whole number of micro-dollars")
    return int(micro)


def row(t, prices):
    gpu = single(t["gpus"])
    acc = single(t["accelerators"])
    flags = []
    if t["burstable"]:
        flags.append("B")
    if t["baremetal"]:
        flags.append("M")
    if t["encryptionInTransitSupported"]:
        flags.append("E")
    hv = {"nitro": "NITRO", "xen": "XEN", "": "NOHV"}[t["hypervisor"]]
    fields = [
        c_str(t["name"]), c_str(t["family"]), c_str(t["size"]), c_str(t["category"] or ""),
        t["generation"] or 0, t["vcpu"], t["memoryMiB"],
        "A64" if t["arch"] == "amd64" else "ARM", hv,
        c_str(t["cpuManufacturer"] or ""), t["cpuSustainedClockSpeedMhz"] or 0,
        f'{c_str(gpu["name"])}, {c_str(gpu["manufacturer"])}, {gpu["count"]}, {gpu["memoryMiB"]}'
        if gpu else "NO_GPU",
        f'{c_str(acc["name"])}, {c_str(acc["manufacturer"])}, {acc["count"]}, '
        f'{acc.get("coresPerDevice") or 0}' if acc else "NO_ACCEL",
        t["defaultCardMaxENIs"], t["ipv4PerENI"],
        t["podENI"] if t["trunkingCompatible"] else 0, t["maxEFAInterfaces"] or 0,
        t["networkBandwidthMbps"] or 0, t["ebsBandwidthMbps"] or 0, t["localNVMeGB"] or 0,
        "|".join(flags) or "0", micro_usd(prices[t["name"]]),
    ]
    return "    {" + ", ".join(str(f) for f in fields) + "},"


HEADER = """\
/*
 * Built-in AWS instance-type table: GENERATED by scripts/gen-aws-catalog.py
 * from public AWS instance facts (EC2 instance-type specifications, VPC CNI
 * ENI limits, published network bandwidth) and the {region} Linux on-demand
 * price list. Do not edit by hand; change the script and regenerate.
 *
 * {count} instance types of {families} families, sorted by name. Every row's
 * capacity and allocatable were checked by the generator against the
 * allocatable figures Karpenter publishes for AL2023 (cpu, memory, pods,
 * ephemeral-storage and extended resources): {count} of {count} match.
 *
 * Columns, in kp_aws_type_info order: name, family, size, category,
 * generation, vcpu, memory MiB, arch, hypervisor, cpu manufacturer, clock MHz,
 * gpu name, gpu manufacturer, gpu count, gpu memory MiB (per GPU),
 * accelerator name, accelerator manufacturer, accelerator count, Neuron
 * cores per device, default-card max ENIs, IPv4 per ENI, pod ENIs, max EFA,
 * network Mbps, EBS Mbps, local NVMe GB, flags (B burstable, M bare metal,
 * E encryption in transit), price (micro-USD per hour; 0.096 $/h is 96000).
 */
#include "cloud/aws_catalog.h"

#define A64 KP_AWS_ARCH_AMD64
#define ARM KP_AWS_ARCH_ARM64
#define NITRO KP_AWS_HV_NITRO
#define XEN KP_AWS_HV_XEN
#define NOHV KP_AWS_HV_NONE
#define NO_GPU NULL, NULL, 0, 0
#define NO_ACCEL NULL, NULL, 0, 0
#define B KP_AWS_TYPE_BURSTABLE
#define M KP_AWS_TYPE_BAREMETAL
#define E KP_AWS_TYPE_ENCRYPTION_IN_TRANSIT

/* One row per line, so diffs after a regeneration stay readable. */
/* clang-format off */
static const kp_aws_type_info kp_aws_catalog_rows[] = {{
"""

FOOTER = """\
}};
/* clang-format on */

const kp_aws_type_info *kp_aws_catalog_table(size_t *count)
{{
    *count = sizeof(kp_aws_catalog_rows) / sizeof(kp_aws_catalog_rows[0]);
    return kp_aws_catalog_rows;
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("instance_types", help="instance-type facts (JSON array)")
    ap.add_argument("pricing", help="on-demand prices (JSON: region -> type -> USD/hour)")
    ap.add_argument("-o", "--output", default=OUTPUT_DEFAULT)
    args = ap.parse_args()

    types = load_types(args.instance_types)
    with open(args.pricing, encoding="utf-8") as f:
        prices = json.load(f)[REGION]

    # The formulas are also checked on every type that has published figures,
    # not only the selected ones, so a rule that happens to hold for our
    # families but not in general is caught. Outside the table only the four
    # core resources must agree: the published list predates the newest ENI
    # limits, so some new types lack their pod-eni figure there.
    documented = [t for t in types if t.get("docsAllocatableAL2023") and t.get("vcpu")
                  and t.get("defaultCardMaxENIs") is not None]
    wide = {t["name"]: check_allocatable(t) for t in documented}
    core_bad = [p for ps in wide.values() for p in ps if p.split(" ")[1].rstrip(":") in CORE]
    wide_ok = sum(1 for ps in wide.values() if not ps)
    core_ok = len(documented) - len({p.split(" ")[0] for p in core_bad})

    wanted = set(FAMILIES)
    selected, skipped, problems = [], [], list(core_bad)
    for t in types:
        if t["family"] not in wanted:
            continue
        reason = usable(t, prices)
        if reason:
            skipped.append(f"{t['name']} ({reason})")
            continue
        problems += check_name_rules(t) + wide[t["name"]]
        selected.append(t)
    selected.sort(key=lambda t: t["name"].encode())
    bad_rows = {p.split(" ")[0].rstrip(":") for p in problems}
    sel_ok = sum(1 for t in selected if t["name"] not in bad_rows)

    print(f"published types, cpu/memory/pods/ephemeral-storage: {core_ok}/{len(documented)} match")
    print(f"published types, every resource: {wide_ok}/{len(documented)} match")
    print(f"table rows, every resource and name rule: {sel_ok}/{len(selected)} match")
    for s in skipped:
        print(f"skipped {s}")
    missing = sorted(wanted - {t["family"] for t in selected})
    if missing:
        print("families without usable rows: " + " ".join(missing))
    if problems:
        for p in sorted(set(problems)):
            print("MISMATCH " + p, file=sys.stderr)
        return 1

    families = len({t["family"] for t in selected})
    out = [HEADER.format(region=REGION, count=len(selected), families=families)]
    out += [row(t, prices) + "\n" for t in selected]
    out.append(FOOTER.format())
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("".join(out))
    print(f"wrote {args.output}: {len(selected)} rows, {families} families")
    return 0


if __name__ == "__main__":
    sys.exit(main())
