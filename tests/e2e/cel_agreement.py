#!/usr/bin/env python3
"""Every admission fixture, judged twice: by the real API server (the CRDs' schema and
CEL rules, our webhook not registered) and by karpenter-webhook's /validate. Prints
one line per fixture case and every disagreement in full; exits 1 on any, 2 when
it cannot run.

    cel_agreement.py --api URL --token TOKEN --ca FILE --webhook URL --webhook-ca FILE
                     --fixtures DIR [--extra FILE...]

A fixture file (tests/unit/data/admission/*.yaml, see tests/unit/test_validate_admission.c)
names a kind, a base object and cases; a case edits a copy of the base (`set`: JSON
pointer -> value, parents created; `remove`: pointers) and may be an update (`op:
update`, the old object being the base edited by `old`). --extra adds whole objects
(JSON or YAML), each one case, a create.

Agreement: the two verdicts are the same, except for a case marked `crd_admits: true`:
an object Karpenter's CRDs admit and Karpenter itself refuses only later, in its
controller (its runtime validation: cron schedules, label key lengths, the kubelet
configuration, ...), which our webhook refuses at admission instead. For such a case
the API server must allow and the webhook must refuse; so a CEL rule lost from crds/
(the API server then allows an unmarked case the webhook refuses) and a marker gone
stale (the API server now refuses a marked case) both count as disagreements.

The API server's verdict is a server-side dry run with strict field validation
(kubectl's default: an unknown field is an error): a create is POST ?dryRun=All; an
update creates the old object for real, PUTs the new one as a dry run with the old
resourceVersion, and deletes the old one. Our webhook's verdict is an AdmissionReview
of the same object (and old object) sent to /validate.
"""
import argparse
import copy
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

KINDS = {
    "NodePool": ("karpenter.sh", "v1", "nodepools"),
    "NodeClaim": ("karpenter.sh", "v1", "nodeclaims"),
    "EC2NodeClass": ("karpenter.k8s.aws", "v1", "ec2nodeclasses"),
    "NodeOverlay": ("karpenter.sh", "v1alpha1", "nodeoverlays"),
}
TIMEOUT = 30


def unescape(token):
    return token.replace("~1", "/").replace("~0", "~")


def pointer_parts(pointer):
    if not pointer.startswith("/"):
        raise ValueError("bad JSON pointer %r" % pointer)
    return [unescape(p) for p in pointer[1:].split("/")]


def set_at(doc, pointer, value):
    """Set `pointer` to `value`, creating missing parent objects (as the unit test)."""
    parts = pointer_parts(pointer)
    node = doc
    for p in parts[:-1]:
        if isinstance(node, list):
            node = node[int(p)]
        else:
            node = node.setdefault(p, {})
    last = parts[-1]
    if isinstance(node, list):
        if last == "-":
            node.append(copy.deepcopy(value))
        elif int(last) < len(node):
            node[int(last)] = copy.deepcopy(value)
        else:
            node.insert(int(last), copy.deepcopy(value))
    else:
        node[last] = copy.deepcopy(value)


def remove_at(doc, pointer):
    parts = pointer_parts(pointer)
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if isinstance(node, list):
        del node[int(last)]
    else:
        del node[last]


def edited(base, edit):
    doc = copy.deepcopy(base)
    edit = edit or {}
    for pointer, value in (edit.get("set") or {}).items():
        set_at(doc, pointer, value)
    for pointer in edit.get("remove") or []:
        remove_at(doc, pointer)
    if edit.get("patch"):
        raise ValueError("JSON patch edits are not supported here; use set/remove")
    return doc


def load_cases(fixtures, extras):
    """(where, kind, object, old object or None, crd_admits), in file order."""
    cases = []
    for name in sorted(os.listdir(fixtures)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(fixtures, name)) as f:
            root = yaml.safe_load(f)
        base = root["base"]
        if isinstance(base, str):
            with open(os.path.join(fixtures, "bases", base + ".yaml")) as f:
                base = yaml.safe_load(f)
        for i, tc in enumerate(root["cases"]):
            where = '%s: case %d "%s"' % (name, i, tc["name"])
            obj = edited(base, tc)
            old = edited(base, tc.get("old")) if tc.get("op") == "update" else None
            cases.append((where, root["kind"], obj, old, tc.get("crd_admits") is True))
    for path in extras:
        with open(path) as f:
            obj = yaml.safe_load(f)
        cases.append((os.path.basename(path), obj["kind"], obj, None, False))
    return cases


class Client:
    def __init__(self, args):
        self.api = args.api.rstrip("/")
        self.token = args.token
        self.api_ctx = ssl.create_default_context(cafile=args.ca)
        self.webhook = args.webhook.rstrip("/")
        self.webhook_ctx = ssl.create_default_context(cafile=args.webhook_ca)

    def call(self, method, path, body=None, content_type="application/json"):
        """(HTTP status, decoded JSON body) from the API server."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.api_ctx, timeout=TIMEOUT) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"message": raw.decode(errors="replace")}

    def collection(self, kind):
        group, version, resource = KINDS[kind]
        return "/apis/%s/%s/%s" % (group, version, resource)

    def api_verdict(self, kind, obj, old):
        """(allowed, message) of the API server for a create, or an update from old."""
        query = "?dryRun=All&fieldValidation=Strict"
        base = self.collection(kind)
        if old is None:
            status, body = self.call("POST", base + query, obj)
            return verdict(status, body)
        name = old["metadata"]["name"]
        status, created = self.call("POST", base + "?fieldValidation=Strict", old)
        if status != 201:
            raise RuntimeError("the old object of an update was refused: %s" % message(created))
        try:
            new = copy.deepcopy(obj)
            new.setdefault("metadata", {})["resourceVersion"] = created["metadata"]["resourceVersion"]
            status, body = self.call("PUT", "%s/%s%s" % (base, urllib.parse.quote(name), query), new)
            return verdict(status, body)
        finally:
            self.delete(base, name)

    def delete(self, base, name):
        """Deletes an object, its finalizers first (nothing here would remove them)."""
        path = "%s/%s" % (base, urllib.parse.quote(name))
        self.call("PATCH", path, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        status, body = self.call("DELETE", path)
        if status not in (200, 202, 404):
            raise RuntimeError("cannot delete %s: %s" % (path, message(body)))

    def webhook_verdict(self, kind, obj, old):
        group, version, resource = KINDS[kind]
        request = {
            "uid": "cel-agreement",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "name": (obj.get("metadata") or {}).get("name", ""),
            "operation": "UPDATE" if old is not None else "CREATE",
            "userInfo": {"username": "admin", "groups": ["system:masters"]},
            "object": obj,
            "oldObject": old,
            "dryRun": True,
        }
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
        req = urllib.request.Request(self.webhook + "/validate", data=json.dumps(review).encode(),
                                     method="POST")
        req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, context=self.webhook_ctx, timeout=TIMEOUT) as r:
            response = json.loads(r.read())["response"]
        return response["allowed"], (response.get("status") or {}).get("message", "")


def message(body):
    return body.get("message") or json.dumps(body)[:300]


def verdict(status, body):
    if status in (200, 201):
        return True, ""
    if status in (400, 422):
        return False, message(body)
    raise RuntimeError("API server answered %d: %s" % (status, message(body)))


def main():
    p = argparse.ArgumentParser()
    for flag in ("--api", "--token", "--ca", "--webhook", "--webhook-ca", "--fixtures"):
        p.add_argument(flag, required=True)
    p.add_argument("--extra", nargs="*", default=[])
    args = p.parse_args()
    client = Client(args)
    cases = load_cases(args.fixtures, args.extra)
    disagreements = []
    counts = {"both allow": 0, "both refuse": 0, "refused only by the webhook, as marked": 0}
    for where, kind, obj, old, crd_admits in cases:
        api_ok, api_msg = client.api_verdict(kind, obj, old)
        web_ok, web_msg = client.webhook_verdict(kind, obj, old)
        if crd_admits and api_ok and not web_ok:
            counts["refused only by the webhook, as marked"] += 1
            print("agree   %-7s %s (crd_admits)" % ("refuse", where))
            continue
        if not crd_admits and api_ok == web_ok:
            counts["both allow" if api_ok else "both refuse"] += 1
            print("agree   %-7s %s" % ("allow" if api_ok else "refuse", where))
            continue
        disagreements.append((where, api_ok, api_msg, web_ok, web_msg, crd_admits))
        print("DISAGREE %s: API server %s, webhook %s%s"
              % (where, "allows" if api_ok else "refuses", "allows" if web_ok else "refuses",
                 " (marked crd_admits: the API server should allow, the webhook refuse)" if crd_admits else ""))
    print()
    for where, api_ok, api_msg, web_ok, web_msg, crd_admits in disagreements:
        print("disagreement: %s%s" % (where, " (crd_admits)" if crd_admits else ""))
        print("    API server: %s%s" % ("allowed" if api_ok else "refused: ", api_msg))
        print("    webhook:    %s%s" % ("allowed" if web_ok else "refused: ", web_msg))
    print("cel agreement: %d cases, %s, %d disagreements"
          % (len(cases), ", ".join("%d %s" % (n, k) for k, n in counts.items()), len(disagreements)))
    return 1 if disagreements else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # a broken run is not a disagreement: exit 2, with the reason
        import traceback
        traceback.print_exc()
        sys.exit(2)
