#!/usr/bin/env python3
"""Time ``explain`` of one pod with the full matrix (every node filtered, one row per node), after loading.

    python bench/explain.py FILE [--pod NS/NAME] [--repeat 5]

The snapshot is loaded once; then, ``--repeat`` times each, CPU seconds (user+sys of this process) of:

- ``first``: explain of ``--pod`` (default: the first pending pod in queue order), as
  ``pysched explain POD --evaluate-all-nodes --all-nodes`` runs it: the explain run, then the report's blocks;
  the JSON data (``-o json``) separately;
- ``unschedulable``: a pod nobody can place (the first pending pod with 1000 cores requested, top priority,
  one pass): its traced cycle, preemption's dry run and the what-if on every node.

A pod further down the queue costs the simulation of the pods ahead of it as well (``simulate``'s
speed, see ``bench.py``). Best and median of the repeats are printed; the machine's load changes the
figures, CPU time less than wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pysched.framework.config import load_config
from pysched.model.objects import parse_pod
from pysched.plugins import in_tree_registry
from pysched.report.explain import build_explain_document, explain_data
from pysched.report.serialize import to_json
from pysched.scheduler.explain import explain_pod
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    c0 = cpu()
    out = fn()
    return cpu() - c0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--pod", help="NS/NAME (default: the first pending pod in queue order)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    reg = in_tree_registry()
    cfg = load_config(None, reg)
    t0 = time.perf_counter()
    cluster = load_snapshot([args.file])
    print(f"loaded {len(cluster.nodes)} nodes, {len(cluster.pods)} pods in {time.perf_counter() - t0:.1f} s wall")
    first = Simulation(cluster, cfg, reg, SimulationOptions())._queue()[0][0]
    raw = dict(first.raw, metadata={"name": "bench-too-big", "namespace": first.namespace})
    raw["spec"] = dict(raw["spec"], priority=2_000_000_000, containers=[
        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1000"}}}])
    too_big = parse_pod(raw, len(cluster.pods))
    cases = [
        ("first", cluster, args.pod or first.key, SimulationOptions(evaluate_all_nodes=True)),
        ("unschedulable", dataclasses.replace(cluster, pods=[too_big, *cluster.pods]), too_big.key,
         SimulationOptions(evaluate_all_nodes=True, passes=1)),
    ]
    print(f"{'case':<14} {'pod':<34} {'outcome':<14} {'explain s':>10} {'+ blocks s':>11} {'json s':>8}  (CPU; best / median)")
    for name, c, key, opts in cases:
        runs = []
        for _ in range(args.repeat):
            t_explain, e = timed(lambda c=c, key=key, opts=opts: explain_pod(c, cfg, reg, key, opts))
            t_blocks, _ = timed(lambda e=e: build_explain_document(e, all_nodes=True, max_rows=0))
            t_json, _ = timed(lambda e=e: to_json(explain_data(e)))
            runs.append((t_explain, t_blocks, t_json))
        outcome = str(e.cycles[-1].outcome) if e.cycles else "-"
        cols = [f"{min(r[i] for r in runs):.3f}/{statistics.median(r[i] for r in runs):.3f}" for i in range(3)]
        print(f"{name:<14} {key:<34} {outcome:<14} {cols[0]:>10} {cols[1]:>11} {cols[2]:>8}")


if __name__ == "__main__":
    main()
