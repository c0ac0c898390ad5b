#!/usr/bin/env python3
"""Benchmark ``pysched simulate`` on Deployments: a generated cluster of Nodes and Deployments (no pending
pods written out), expanded into pods by the controllers layer, then simulated.

    python bench/bench_workloads.py [--nodes 5000] [--deployments 100] [--replicas 100] [--seed 1]
                                    [--format json|yaml] [--keep DIR]

Prints load, expansion and scheduling time (a fresh process, default options) and peak RSS. The machine
may be shared: run it more than once and say so next to any figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

ZONES = ["zone-a", "zone-b", "zone-c"]
CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pysched.plugins import in_tree_registry
from pysched.framework.config import load_config
from pysched.snapshot.loader import load_snapshot
from pysched.controllers import expand_cluster
from pysched.scheduler.simulation import Simulation, SimulationOptions
reg = in_tree_registry(); cfg = load_config(None, reg)
t1 = time.perf_counter()
cluster = load_snapshot([sys.argv[1]])
t2 = time.perf_counter()
world = expand_cluster(cluster)
t3 = time.perf_counter()
res = Simulation(world, cfg, reg, SimulationOptions()).run()
t4 = time.perf_counter()
print(json.dumps({"load_s": t2 - t1, "expand_s": t3 - t2, "schedule_s": t4 - t3, "cycles": len(res.cycles),
                  "created": sum(len(w.created) for w in world.expansion.workloads.values()),
                  "bound": len(res.bindings), "pending": len(res.pending),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def node(i: int, rng: random.Random) -> dict:
    name = f"node-{i:05d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                   "topology.kubernetes.io/zone": ZONES[i % 3]}},
            "status": {"allocatable": {"cpu": rng.choice(["4", "8", "16"]), "memory": rng.choice(["16Gi", "32Gi"]),
                                       "pods": "110"}}}


def deployment(i: int, replicas: int, rng: random.Random) -> dict:
    app = f"app-{i:03d}"
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": app, "namespace": f"team-{i % 7}", "creationTimestamp": "2025-03-01T08:00:00Z"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": {"metadata": {"labels": {"app": app}},
                                  "spec": {"containers": [{"name": "main", "image": f"registry.example.com/{app}:1",
                                                           "resources": {"requests": {
                                                               "cpu": rng.choice(["100m", "250m", "500m"]),
                                                               "memory": rng.choice(["128Mi", "256Mi", "1Gi"])}}}]}}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--deployments", type=int, default=100)
    ap.add_argument("--replicas", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=["json", "yaml"], default="json")
    ap.add_argument("--keep", help="keep the generated snapshot in this folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    items = [node(i, rng) for i in range(1, args.nodes + 1)]
    items += [deployment(i, args.replicas, rng) for i in range(args.deployments)]
    doc = {"apiVersion": "v1", "kind": "List", "items": items}
    folder = args.keep or tempfile.mkdtemp(prefix="pysched-bench-")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"workloads.{args.format}")
    with open(path, "w") as f:
        if args.format == "json":
            json.dump(doc, f)
        else:
            import yaml
            yaml.safe_dump(doc, f, sort_keys=False)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": root}, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    pods = r["created"]
    print(f"{args.nodes} nodes, {args.deployments} Deployments x {args.replicas} replicas ({args.format}): "
          f"load {r['load_s']:.2f}s, expand {r['expand_s']:.2f}s ({pods} pods), "
          f"schedule {r['schedule_s']:.2f}s ({pods / max(r['schedule_s'], 1e-9):.0f} pods/s), "
          f"bound {r['bound']}, pending {r['pending']}, peak {r['peak_mib']:.0f} MiB")


if __name__ == "__main__":
    main()
