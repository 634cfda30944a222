#!/usr/bin/env python3
"""Pods at scale for tests/e2e/bench_provisioning.sh (large_run).

    bench_large.py PODS NAMESPACE

Creates PODS identical pods (750m CPU, 64Mi) through the API with parallel
clients, and plays the part of a scheduler that costs nothing: a pod with no
node that has room for it is marked PodScheduled=False/Unschedulable (what
kube-scheduler writes and what the controller provisions for), and as nodes
become Ready without NoSchedule/NoExecute taints it is bound to the first one
with room. kube-scheduler 1.20 filters every node for every pod (a full node
is never one of the feasible ones it stops at), about 100 ms a pod at 2000
nodes on a 2-core machine: it, not the controller, would be what is measured.

Prints one summary line: pods created and how long that took, the time from
the first pod created to the last bound, and per pod (creation accepted ->
binding accepted) p50 and p99. Exit status 0 when every pod was bound.
Credentials and the API address come from the e2e cluster's environment.
"""
import collections
import http.client
import json
import os
import ssl
import sys
import threading
import time

POD_CPU_M, POD_MEM = 750, 64 << 20
CREATORS, BINDERS = 16, 8
DEADLINE_S = 3600


class Api:
    """One keep-alive connection (one per thread), reopened after an error."""

    def __init__(self, timeout=60):
        url = os.environ["KP_E2E_API_URL"].split("//", 1)[1]
        self.host, self.port = url.rsplit(":", 1)
        self.ctx = ssl.create_default_context(cafile=os.environ["KP_E2E_CA_FILE"])
        self.hdr = {"Authorization": "Bearer " + os.environ["KP_E2E_ADMIN_TOKEN"]}
        self.timeout, self.conn = timeout, None

    def call(self, method, path, body=None, ctype="application/json"):
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, int(self.port), context=self.ctx,
                                                            timeout=self.timeout)
                hdr = dict(self.hdr, **({"Content-Type": ctype} if body is not None else {}))
                self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=hdr)
                r = self.conn.getresponse()
                data = r.read()
                if r.status == 429 or r.status >= 500:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                return r.status, data
            except (OSError, http.client.HTTPException):
                self.conn = None
                time.sleep(0.2 * (attempt + 1))
        return 0, b""

    def stream(self, path):
        self.conn = http.client.HTTPSConnection(self.host, int(self.port), context=self.ctx, timeout=DEADLINE_S)
        self.conn.request("GET", path, headers=self.hdr)
        return self.conn.getresponse()


def quantity(s, binary_units):
    """CPU in millicores, memory in bytes: the forms kwok nodes report."""
    s = str(s)
    if not binary_units:
        return int(s[:-1]) if s.endswith("m") else int(float(s) * 1000)
    for suffix, mult in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30), ("Ti", 1 << 40)):
        if s.endswith(suffix):
            return int(float(s[:-2]) * mult)
    return int(float(s))


class Cluster:
    """Nodes and how many more pods each takes; pods waiting for one."""

    def __init__(self):
        self.cv = threading.Condition()
        self.room = {}                     # node -> pods it can still take (0 when not usable)
        self.cap = {}                      # node -> pods it takes when empty
        self.used = collections.Counter()  # node -> pods bound there by us
        self.open = collections.deque()    # nodes that may have room, first seen first
        self.fresh = collections.deque()   # created, not yet looked at
        self.waiting = collections.deque() # marked unschedulable, waiting for room
        self.created, self.bound = {}, {}

    def node_event(self, node):
        name, status = node["metadata"]["name"], node.get("status", {})
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions", []))
        tainted = any(t.get("effect") in ("NoSchedule", "NoExecute") for t in node["spec"].get("taints", []))
        alloc = status.get("allocatable", {})
        cap = 0
        if ready and not tainted and not node["spec"].get("unschedulable"):
            cap = min(quantity(alloc.get("cpu", "0"), False) // POD_CPU_M,
                      quantity(alloc.get("memory", "0"), True) // POD_MEM, int(alloc.get("pods", "0")))
        with self.cv:
            self.cap[name] = cap
            self.room[name] = max(0, cap - self.used[name])
            if self.room[name] > 0:
                self.open.append(name)
                self.cv.notify_all()

    def take_node(self):
        """A node with room, reserved for one pod (lock held), or None."""
        while self.open and self.room.get(self.open[0], 0) <= 0:
            self.open.popleft()
        if not self.open:
            return None
        node = self.open[0]
        self.room[node] -= 1
        self.used[node] += 1
        return node

    def give_back(self, node):
        with self.cv:
            self.used[node] -= 1
            if node in self.room:
                self.room[node] = max(0, self.cap[node] - self.used[node])
                self.open.appendleft(node)
                self.cv.notify_all()


def watch_nodes(cluster):
    api = Api()
    while True:
        status, data = api.call("GET", "/api/v1/nodes")
        if status != 200:
            time.sleep(1)
            continue
        listed = json.loads(data)
        for n in listed["items"]:
            cluster.node_event(n)
        rv = listed["metadata"]["resourceVersion"]
        try:
            r = api.stream("/api/v1/nodes?watch=1&allowWatchBookmarks=1&resourceVersion=%s&timeoutSeconds=%d"
                           % (rv, DEADLINE_S))
            for line in r:
                ev = json.loads(line)
                if ev["type"] in ("ADDED", "MODIFIED"):
                    cluster.node_event(ev["object"])
                elif ev["type"] == "DELETED":
                    with cluster.cv:
                        cluster.room.pop(ev["object"]["metadata"]["name"], None)
        except (OSError, http.client.HTTPException, ValueError):
            pass  # list again


UNSCHEDULABLE = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": "0 nodes are available: no node has room for the pod."}]}}


def bind_loop(cluster, ns, done):
    api = Api()
    while not done.is_set():
        with cluster.cv:
            pod, node, fresh = None, None, False
            if cluster.fresh:
                pod, fresh = cluster.fresh.popleft(), True
                node = cluster.take_node()
            elif cluster.waiting:
                node = cluster.take_node()
                if node:
                    pod = cluster.waiting.popleft()
            if pod is None:
                cluster.cv.wait(0.5)
                continue
        if node is None:  # fresh, and nowhere to go yet: say so, as kube-scheduler does
            api.call("PATCH", "/api/v1/namespaces/%s/pods/%s/status" % (ns, pod), UNSCHEDULABLE,
                     "application/strategic-merge-patch+json")
            with cluster.cv:
                cluster.waiting.append(pod)
            continue
        status, _ = api.call("POST", "/api/v1/namespaces/%s/pods/%s/binding" % (ns, pod),
                             {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod},
                              "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        if status == 201:
            with cluster.cv:
                cluster.bound[pod] = time.time()
                if len(cluster.bound) == len(cluster.created) == cluster.total:
                    done.set()
            continue
        cluster.give_back(node)
        with cluster.cv:
            (cluster.fresh if fresh else cluster.waiting).append(pod)
        time.sleep(0.1)


def create_loop(cluster, ns, first, step, failed):
    api = Api()
    for i in range(first, cluster.total, step):
        name = "large-%06d" % i
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "large"}},
                "spec": {"schedulerName": "bench-binder", "terminationGracePeriodSeconds": 0,
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.7",
                                         "resources": {"requests": {"cpu": "%dm" % POD_CPU_M,
                                                                    "memory": "%dMi" % (POD_MEM >> 20)}}}]}}
        status, data = api.call("POST", "/api/v1/namespaces/%s/pods" % ns, body)
        if status != 201:
            print("create %s failed: %d %s" % (name, status, data[:200]), file=sys.stderr)
            failed.set()
            return
        with cluster.cv:
            cluster.created[name] = time.time()
            cluster.fresh.append(name)
            cluster.cv.notify_all()


def main():
    total, ns = int(sys.argv[1]), sys.argv[2]
    cluster = Cluster()
    cluster.total = total
    done, failed = threading.Event(), threading.Event()
    threading.Thread(target=watch_nodes, args=(cluster,), daemon=True).start()
    for _ in range(BINDERS):
        threading.Thread(target=bind_loop, args=(cluster, ns, done), daemon=True).start()
    t0 = time.time()
    creators = [threading.Thread(target=create_loop, args=(cluster, ns, k, CREATORS, failed))
                for k in range(CREATORS)]
    for t in creators:
        t.start()
    for t in creators:
        t.join()
    t_created = time.time()
    while not done.is_set() and not failed.is_set() and time.time() - t0 < DEADLINE_S:
        done.wait(1)
    with cluster.cv:
        lat = sorted((cluster.bound[p] - cluster.created[p]) * 1000 for p in cluster.bound)
        t_bound = max(cluster.bound.values()) if cluster.bound else float("nan")
        n_bound = len(cluster.bound)
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] if lat else float("nan")
    print("%d created in %.1f s; %d bound %.1f s after the first was created (%.1f s after the last);"
          " per pod created->bound p50 %.0f ms p99 %.0f ms"
          % (total, t_created - t0, n_bound, t_bound - t0, t_bound - t_created, q(0.5), q(0.99)))
    sys.exit(0 if n_bound == total else 1)


if __name__ == "__main__":
    main()
