"""The fast path and the per-node reference path (``batched=False``) are one set of semantics: on generated
clusters with every family at once (``bench/bench.py``'s ``all`` workload: resources, GPUs, pods without
requests, taints, node affinity and selectors, topology spread, required and preferred pod (anti-)affinity,
host ports, images, cordoned nodes, scheduling gates, PDBs, priorities and preemption) both must print
the same ``--trace`` JSON, byte for byte."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.plugins.interpodaffinity import InterPodAffinity
from pysched.plugins.podtopologyspread import PodTopologySpread
from pysched.report.serialize import to_json
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.builders import load_bench, topology_cluster

bench = load_bench()

REGISTRY = in_tree_registry()
CONFIG = load_config(None, REGISTRY)


def _both(path: Path) -> tuple[str, str, list]:
    out = {}
    cycles: list = []
    for batched in (True, False):
        result = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY,
                            SimulationOptions(trace=True, batched=batched)).run()
        out[batched] = to_json(result.to_dict())
        if batched:
            cycles = result.cycles
    return out[True], out[False], cycles


def _first_difference(a: str, b: str) -> str:
    ca, cb = json.loads(a)["cycles"], json.loads(b)["cycles"]
    for x, y in zip(ca, cb, strict=False):
        if x != y:
            keys = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
            return f"pass {x['pass']} {x['pod']}: {keys}"
    return "outside the cycles"


def _write(tmp_path: Path, nodes: int, pods: int, running: int, seed: int) -> Path:
    path = tmp_path / f"all-{seed}.json"
    path.write_text(json.dumps(bench.generate_all(nodes, pods, running, seed)))
    return path


@pytest.mark.parametrize("seed", [1, 3, 7])
def test_both_paths_print_the_same_json(seed: int, tmp_path: Path) -> None:
    """250 nodes (so filtering stops at percentageOfNodesToScore), 200 pending pods, full enough that
    about a third stay pending and some preempt (victims include pods bound earlier in the run)."""
    fast, reference, cycles = _both(_write(tmp_path, 250, 200, 2200, seed))
    assert fast == reference, _first_difference(fast, reference)
    outcomes = Counter(c.outcome for c in cycles)
    assert outcomes["Scheduled"] > 50 and outcomes["Unschedulable"] > 10 and outcomes["Nominated"] >= 1, outcomes
    assert any(c.evaluated_nodes < 250 for c in cycles)  # the adaptive percentage stopped some passes early


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(10, 10_000), nodes=st.integers(3, 40), fill=st.integers(2, 12))
def test_both_paths_agree_on_small_generated_clusters(seed: int, nodes: int, fill: int, tmp_path: Path) -> None:
    fast, reference, _ = _both(_write(tmp_path, nodes, nodes * 2, nodes * fill, seed))
    assert fast == reference, _first_difference(fast, reference)


def test_the_reference_path_keeps_nothing_across_cycles(tmp_path: Path) -> None:
    """No per-node memo, cluster-wide count or score map survives a cycle on the reference path: every
    cycle computes from the cluster as it stands (the fast path does keep them; that is the point)."""
    path = _write(tmp_path, 60, 80, 300, 5)
    kept = {}
    for batched in (True, False):
        sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions(batched=batched))
        sim.run()
        fwk = sim.frameworks["default-scheduler"]
        ipa = next(p for p in fwk.pre_filter if isinstance(p, InterPodAffinity))
        pts = next(p for p in fwk.pre_filter if isinstance(p, PodTopologySpread))
        kept[batched] = (len(ipa._cache._data), len(ipa._aggregates), ipa._anti_version,
                         len(pts._counts._data), len(pts._domains), pts._workload_index is not None)
    assert kept[False] == (0, 0, -1, 0, 0, False)
    assert kept[True] != kept[False]


# ------------------------------------------------------------------ topology spread and pod (anti-)affinity
# Clusters of 64+ nodes (the batched filter's minimum) whose pods draw spread constraints (every key,
# minDomains, both node inclusion policies, matchLabelKeys) and required / preferred pod (anti-)affinity
# terms at random; some nodes lack a topology key, some are tainted, running pods carry terms of their own.

@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 100_000), nodes=st.integers(64, 110), running=st.integers(0, 150))
def test_both_paths_agree_on_spread_and_pod_affinity(seed: int, nodes: int, running: int, tmp_path: Path) -> None:
    """Decisions and every rejected node's status (the --trace JSON) on both paths, with
    PodTopologySpread and InterPodAffinity judged as arrays on the batched path."""
    path = tmp_path / f"topology-{seed}.json"
    path.write_text(json.dumps(topology_cluster(seed, nodes, running, 50)))
    fast, reference, cycles = _both(path)
    assert fast == reference, _first_difference(fast, reference)
    assert any(c.outcome == "Scheduled" for c in cycles)
