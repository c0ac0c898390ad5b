#!/usr/bin/env python3
"""Benchmark pysched on generated clusters.

    python bench/bench.py [--workload basic|mixed|dra|both] [--nodes 5000] [--pods 10000] [--running 1247]
                          [--format json|yaml] [--seed 1] [--keep DIR] [--explain]

Generates the workload deterministically (seeded), writes it as a ``kubectl get -o json`` style List,
then runs ``pysched simulate`` on it in a fresh process (default options: adaptive
percentageOfNodesToScore, rotating start index) and prints load time, scheduling time, pods/s and peak RSS.
Workload ``dra``: every node has a ResourceSlice of 8 GPUs and every pending pod a claim from one of four
templates (1-4 devices; CEL selectors on attributes and capacity; a NUMA matchAttribute constraint), e.g.
``--workload dra --nodes 500 --pods 2000 --running 0``.
With ``--explain`` it also times ``pysched explain`` of the first pending pod after loading: its traced
cycle with the full filter matrix over every node, the what-if checks and the report built for all nodes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ZONES = ["zone-a", "zone-b", "zone-c"]
APPS = ["web", "api", "cache", "worker", "batch", "search", "db", "queue"]
CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pysched.plugins import in_tree_registry
from pysched.framework.config import load_config
from pysched.snapshot.loader import load_snapshot
from pysched.scheduler.simulation import Simulation, SimulationOptions
reg = in_tree_registry(); cfg = load_config(None, reg)
t1 = time.perf_counter()
cluster = load_snapshot([sys.argv[1]])
t2 = time.perf_counter()
sim = Simulation(cluster, cfg, reg, SimulationOptions())
res = sim.run()
t3 = time.perf_counter()
explain_s = None
if len(sys.argv) > 2 and sys.argv[2] == "explain":
    from pysched.report.explain import build_explain_document
    from pysched.scheduler.whatif import explain_pod
    cluster2 = load_snapshot([sys.argv[1]])
    queue = Simulation(cluster2, cfg, reg, SimulationOptions())._queue()[0]
    t4 = time.perf_counter()
    e = explain_pod(cluster2, cfg, reg, queue[0].key, SimulationOptions())
    build_explain_document(e, all_nodes=True, max_rows=0)
    explain_s = time.perf_counter() - t4
print(json.dumps({"explain_s": explain_s, "import_s": t1 - t0, "load_s": t2 - t1, "schedule_s": t3 - t2, "cycles": len(res.cycles),
                  "bound": len(res.bindings), "pending": len(res.pending),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def node(i: int, rng: random.Random, mixed: bool) -> dict:
    zone = ZONES[i % len(ZONES)]
    labels = {"kubernetes.io/hostname": f"node-{i:05d}", "topology.kubernetes.io/zone": zone,
              "topology.kubernetes.io/region": "region-1", "kubernetes.io/os": "linux"}
    spec: dict = {}
    if mixed:
        labels["pool"] = rng.choice(["general", "general", "compute", "memory"])
        if i % 20 == 0:
            spec["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:05d}", "labels": labels},
            "spec": spec, "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                                     "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def pod(i: int, rng: random.Random, mixed: bool, node_name: str | None) -> dict:
    app = APPS[i % len(APPS)]
    cpu = rng.choice(["100m", "250m", "500m", "1", "2"])
    mem = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi", "4Gi"])
    spec: dict = {"containers": [{"name": "main", "image": f"registry.example.com/{app}:1.{i % 5}",
                                  "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if node_name:
        spec["nodeName"] = node_name
    if mixed:
        kind = i % 10
        if kind == 0:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]
        if kind in (1, 2):
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In",
                                                             "values": ["general", "compute"]}]}]}}}
        if kind in (3, 4):
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": app}}}]
        if kind == 5:
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                  "labelSelector": {"matchLabels": {"app": app}}}}]}}
        if kind == 6:
            spec["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 20, "podAffinityTerm": {"topologyKey": "topology.kubernetes.io/zone",
                                                  "labelSelector": {"matchLabels": {"app": "cache"}}}}]}}
    status = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"} if node_name else {"phase": "Pending"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{app}-{i:06d}", "namespace": "default", "labels": {"app": app},
                         "creationTimestamp": f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z"},
            "spec": spec, "status": status}


GPU = "gpu.example.com"
DRA_TEMPLATES = {  # name -> (count, selectors, constraint on NUMA)
    "gpu-1": (1, [], False),
    "gpu-2-numa": (2, [], True),
    "gpu-3-a100": (3, [f'device.attributes["{GPU}"].model == "a100"'], False),
    "gpu-4-40g": (4, [f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'], False),
}


def dra_objects(nodes: int) -> list[dict]:
    """A DeviceClass, the four claim templates and one ResourceSlice of 8 GPUs per node."""
    r = "resource.k8s.io/v1"
    items: list[dict] = [{"apiVersion": r, "kind": "DeviceClass", "metadata": {"name": GPU},
                          "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}]
    for name, (count, selectors, numa) in DRA_TEMPLATES.items():
        exactly: dict = {"deviceClassName": GPU, "allocationMode": "ExactCount", "count": count}
        if selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        devices: dict = {"requests": [{"name": "gpu", "exactly": exactly}]}
        if numa:
            devices["constraints"] = [{"requests": ["gpu"], "matchAttribute": "dra.example.com/numa"}]
        items.append({"apiVersion": r, "kind": "ResourceClaimTemplate",
                      "metadata": {"name": name, "namespace": "default"}, "spec": {"spec": {"devices": devices}}})
    for i in range(nodes):
        model, mem = ("a100", "80Gi") if i % 2 == 0 else ("l4", "24Gi")
        devs = [{"name": f"gpu-{d}", "attributes": {"model": {"string": model}, "index": {"int": d},
                                                    "dra.example.com/numa": {"int": d // 4},
                                                    "driverVersion": {"version": "1.2.0"}},
                 "capacity": {"memory": {"value": mem}}} for d in range(8)]
        items.append({"apiVersion": r, "kind": "ResourceSlice", "metadata": {"name": f"node-{i:05d}-gpu"},
                      "spec": {"driver": GPU, "nodeName": f"node-{i:05d}",
                               "pool": {"name": f"node-{i:05d}", "generation": 1, "resourceSliceCount": 1},
                               "devices": devs}})
    return items


def generate(workload: str, nodes: int, pods: int, running: int, seed: int) -> dict:
    rng = random.Random(seed)
    mixed = workload == "mixed"
    items = [node(i, rng, mixed) for i in range(nodes)]
    for i in range(running):
        items.append(pod(i, rng, mixed, f"node-{rng.randrange(nodes):05d}"))
    for i in range(running, running + pods):
        items.append(pod(i, rng, mixed, None))
    if workload == "dra":
        names = list(DRA_TEMPLATES)
        for i, p in enumerate(items[nodes + running:]):
            p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": names[i % len(names)]}]
            p["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
        items.extend(dra_objects(nodes))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def run_one(workload: str, args: argparse.Namespace, folder: str) -> dict:
    path = os.path.join(folder, f"{workload}-{args.nodes}x{args.pods}.json")
    data = generate(workload, args.nodes, args.pods, args.running, args.seed)
    if args.format == "yaml":
        import yaml
        path = path[:-5] + ".yaml"
        with open(path, "w") as f:
            yaml.safe_dump(data, f)
    else:
        with open(path, "w") as f:
            json.dump(data, f)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", CHILD, path] + (["explain"] if args.explain else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"pysched failed on {workload}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out.update(workload=workload, nodes=args.nodes, pods=args.pods, wall_s=wall)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=["basic", "mixed", "dra", "both"], default="both")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--running", type=int, default=1247)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["json", "yaml"], default="json")
    ap.add_argument("--keep", help="keep the generated snapshots in this folder")
    ap.add_argument("--explain", action="store_true", help="also time explain of the first pending pod")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="pysched-bench-")
    os.makedirs(folder, exist_ok=True)
    workloads = ["basic", "mixed"] if args.workload == "both" else [args.workload]
    print(f"{'workload':8} {'nodes':>6} {'pods':>6} {'load s':>7} {'sched s':>8} {'total s':>8} {'pods/s':>8} "
          f"{'peak MiB':>9} {'bound':>6}")
    for w in workloads:
        r = run_one(w, args, folder)
        total = r["load_s"] + r["schedule_s"]
        print(f"{w:8} {r['nodes']:6d} {r['pods']:6d} {r['load_s']:7.2f} {r['schedule_s']:8.2f} {total:8.2f} "
              f"{r['cycles'] / max(r['schedule_s'], 1e-9):8.1f} {r['peak_mib']:9.0f} {r['bound']:6d}"
              + (f"   explain {r['explain_s']:.2f} s" if r.get("explain_s") is not None else ""))


if __name__ == "__main__":
    main()
