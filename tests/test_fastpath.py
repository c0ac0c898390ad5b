"""The fast path (node columns, cached shape masks, vectorised Filter and Score) decides exactly as the
per-node reference path: same JSON, byte for byte, on clusters large enough for the fast path to run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler import fastfilter
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot

_spec = importlib.util.spec_from_file_location("bench", Path(__file__).resolve().parent.parent / "bench" / "bench.py")
bench = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(bench)  # type: ignore[union-attr]

FAMILIES = bench.families(0.03)
CASES = {
    "basic": lambda: bench.generate("basic", 100, 150, 40, 1),
    "mixed": lambda: bench.generate("mixed", 100, 200, 80, 2),
    "mixed-other-seed": lambda: bench.generate("mixed", 70, 250, 100, 3),
    **{name: FAMILIES[name][2] for name in ("SchedulingNodeAffinity", "TopologySpreading",
                                            "SchedulingPodAntiAffinity")},
    "PreemptionBasic": bench.families(0.14)["PreemptionBasic"][2],  # 70 nodes: preemption on the fast path
}


def simulate(path: str, batched: bool) -> str:
    reg = in_tree_registry()
    cfg = load_config(None, reg)
    cluster = load_snapshot([path])
    return to_json(Simulation(cluster, cfg, reg, SimulationOptions(batched=batched)).run().to_dict())


@pytest.mark.parametrize("name", list(CASES))
def test_fast_path_decides_as_the_reference_path(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": CASES[name]()}))
    used = []
    real = fastfilter.find_feasible

    def spy(*args: object, **kw: object) -> object:
        out = real(*args, **kw)  # type: ignore[arg-type]
        used.append(out is not None)
        return out

    monkeypatch.setattr("pysched.scheduler.cycle.find_feasible", spy)
    fast = simulate(str(path), True)
    assert any(used), "the fast path never ran"
    assert fast == simulate(str(path), False)
