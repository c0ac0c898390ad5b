#!/usr/bin/env python3
"""Benchmark ``pysched capacity`` against ``pysched simulate`` on the clusters of bench.py.

    python bench/capacity.py [--nodes 5000] [--pods 10000] [--running 1247] [--seed 1] [--cpu 3900m]
                             [--only copies|node-template|simulate ...] [--repeat N]

Three runs, each in a fresh process on a snapshot written as a ``kubectl get -o json`` List:

- ``simulate``: bench.py's basic workload (the nodes, ``--running`` pods bound, ``--pods`` pending);
- ``copies``: the same nodes and running pods, no pending pods, and a small pod template (``--cpu``, 1Gi)
  that fits about 8 times per node: ``capacity --pod`` counts every copy until one does not fit;
- ``node-template``: bench.py's mixed workload (``--pods`` pending on the nodes) and a node template of
  the same shape as its nodes: ``capacity --node-template`` (unfittable pods, doubling, bisection).

Prints load time, the command's own time (wall and CPU: user+sys of the process, which a shared machine
disturbs less), copies counted / nodes needed and peak RSS. The issue's comparison is ``run CPU s`` of
``copies`` against ``simulate``, from the same invocation: ``--only simulate --only copies --repeat 3``
runs the two alternately three times each and keeps each one's least CPU time (a quick look at a smaller
scale: ``--nodes 500 --pods 1000 --running 125``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from pysched.plugins import in_tree_registry
from pysched.framework.config import load_config
from pysched.snapshot.loader import load_snapshot
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.scheduler.capacity import CapacityOptions, check_template, run_capacity
reg = in_tree_registry(); cfg = load_config(None, reg)
what, path = sys.argv[1], sys.argv[2]
t1 = time.perf_counter()
cluster = load_snapshot([path])
t2 = time.perf_counter()
c2 = time.process_time()
out = {}
if what == "simulate":
    res = Simulation(cluster, cfg, reg, SimulationOptions()).run()
    out.update(cycles=len(res.cycles), bound=len(res.bindings))
elif what == "copies":
    template = check_template(json.load(open(sys.argv[3])), sys.argv[3])
    ans = run_capacity(cluster, [template], cfg, reg, CapacityOptions())
    out.update(copies=ans.templates[0].count, stop=ans.templates[0].limiting)
else:
    node = json.load(open(sys.argv[3]))
    ans = run_capacity(cluster, [], cfg, reg, CapacityOptions(node_template=node))
    nt = ans.node_template
    out.update(needed=nt.needed, probed=nt.probed, unfittable=len(nt.unfittable))
t3 = time.perf_counter()
out.update(load_s=t2 - t1, run_s=t3 - t2, run_cpu_s=time.process_time() - c2, peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def _write(folder: str, name: str, data: dict) -> str:
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def _child(*args: str) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"pysched failed: {args[0]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.perf_counter() - t0
    return out


def _best(runs: list[dict]) -> dict:
    """The run with the least CPU time (the machine may be shared: the least disturbed one)."""
    return min(runs, key=lambda r: r["run_cpu_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--running", type=int, default=1247)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu", default="3900m", help="cpu request of the copies' template")
    ap.add_argument("--only", choices=["simulate", "copies", "node-template"], action="append",
                    help="run only this (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run simulate and copies N times each, alternating, and keep each one's least CPU time")
    ap.add_argument("--keep", help="keep the generated snapshots in this folder")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="pysched-capacity-bench-")
    os.makedirs(folder, exist_ok=True)
    runs = args.only or ["simulate", "copies", "node-template"]
    inputs: dict[str, tuple[str, ...]] = {}
    if "simulate" in runs:
        inputs["simulate"] = (_write(folder, "basic.json",
                                     bench.generate("basic", args.nodes, args.pods, args.running, args.seed)),)
    if "copies" in runs:
        snap = _write(folder, "basic-running.json", bench.generate("basic", args.nodes, 0, args.running, args.seed))
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "small", "namespace": "default",
                                                                "labels": {"app": "small"}},
               "spec": {"containers": [{"name": "main", "image": "registry.example.com/small:1",
                                        "resources": {"requests": {"cpu": args.cpu, "memory": "1Gi"}}}]}}
        inputs["copies"] = (snap, _write(folder, "pod.json", pod))
    if "node-template" in runs:
        snap = _write(folder, "mixed.json", bench.generate("mixed", args.nodes, args.pods, args.running, args.seed))
        node = bench.node(args.nodes, __import__("random").Random(args.seed), True)
        node["metadata"]["name"] = "template"
        node["metadata"]["labels"].update({"kubernetes.io/hostname": "template", "pool": "general"})
        node["spec"] = {}
        inputs["node-template"] = (snap, _write(folder, "node.json", node))
    results: dict[str, list[dict]] = {what: [] for what in runs}
    for _ in range(max(1, args.repeat)):
        for what in runs:
            if what == "node-template" and results[what]:
                continue  # minutes long: once
            results[what].append(_child(what, *inputs[what]))
    print(f"{'run':14} {'nodes':>6} {'load s':>7} {'run s':>7} {'run CPU s':>9} {'answer':>28} {'peak MiB':>9}")
    for what in runs:
        r = _best(results[what])
        if what == "simulate":
            answer = f"{r['cycles']} cycles, {r['bound']} bound"
        elif what == "copies":
            answer = f"{r['copies']} copies"
        else:
            answer = f"needed {r['needed']} (tried {r['probed']}), {r['unfittable']} unfit"
        print(f"{what:14} {args.nodes:6d} {r['load_s']:7.2f} {r['run_s']:7.2f} {r['run_cpu_s']:9.2f} {answer:>28} "
              f"{r['peak_mib']:9.0f}", flush=True)
    if len(results.get("simulate", [])) > 1 or len(results.get("copies", [])) > 1:
        for what in ("simulate", "copies"):
            if what in results:
                print(f"{what} CPU s, every run: " + ", ".join(f"{r['run_cpu_s']:.2f}" for r in results[what]))


if __name__ == "__main__":
    main()
