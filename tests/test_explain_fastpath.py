"""explain on the batched path (the traced filter matrix and the what-if's per-node verdicts taken from
the plugins' batch verdicts) prints what the per-node reference path prints, byte for byte, on clusters
large enough (>= 64 nodes) for the batched forms to be used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.explain import explain_data
from pysched.report.serialize import to_json
from pysched.scheduler.explain import explain_pod
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.scheduler.trace import Outcome
from pysched.snapshot.loader import load_snapshot
from tests.builders import load_bench, topology_cluster

bench = load_bench()

REGISTRY = in_tree_registry()
CONFIG = load_config(None, REGISTRY)


def _explain_both(path: Path, picks: int) -> list[tuple[str, str, str]]:
    """Explain of ``picks`` pods that stay pending (what-if on every node) and two that are bound."""
    cluster = load_snapshot([str(path)])
    result = Simulation(cluster, CONFIG, REGISTRY, SimulationOptions()).run()
    pending = list(dict.fromkeys(c.pod for c in result.cycles if c.pod not in result.bindings))
    bound = [c.pod for c in result.cycles if c.outcome == Outcome.SCHEDULED]
    keys = list(dict.fromkeys(pending[:: max(1, len(pending) // picks)][:picks] + bound[:2]))
    out = []
    for key in keys:
        texts = [to_json(explain_data(explain_pod(cluster, CONFIG, REGISTRY, key,
                                                  SimulationOptions(evaluate_all_nodes=True, batched=b))))
                 for b in (True, False)]
        out.append((key, texts[0], texts[1]))
    return out


@pytest.mark.parametrize("seed", [2])
def test_explain_is_the_same_on_both_paths_all_families(seed: int, tmp_path: Path) -> None:
    """Resources, GPUs, taints, node affinity, spread, pod (anti-)affinity, ports, cordoned nodes: a full
    cluster where many pods stay pending (what-if on every node) and some preempt."""
    path = tmp_path / "all.json"
    path.write_text(json.dumps(bench.generate_all(90, 120, 1100, seed)))
    results = _explain_both(path, 4)
    whatifs = [json.loads(fast).get("suggestions") for _, fast, _ in results]
    assert sum(1 for w in whatifs if w and w["nodes_nearest"]) >= 2  # what-ifs over every node computed
    for key, fast, reference in results:
        assert fast == reference, key


def test_explain_is_the_same_on_both_paths_topology(tmp_path: Path) -> None:
    path = tmp_path / "topology.json"
    path.write_text(json.dumps(topology_cluster(11, 80, 120, 30)))
    for key, fast, reference in _explain_both(path, 3):
        assert fast == reference, key
