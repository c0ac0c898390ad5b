"""The batched host choice's input (``Framework.run_score_totals``) against the per-plugin arrays the
traces show (``run_score_arrays``), cycle by cycle: the totals differ from the arrays' sum by one number
on every row (plugins with a constant column are left out of them), every ``batch_constant`` is the
value of its plugin's whole array, and plugins that skip the range check stay in range. Clusters where
feasible rows are scored through row spans with and without holes, and through row numbers."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pysched.framework.config import load_config
from pysched.framework.interface import MAX_NODE_SCORE
from pysched.framework.runtime import Framework
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.columns import feasible_rows
from pysched.snapshot.loader import load_snapshot
from tests.builders import load_bench, topology_cluster

bench = load_bench()

CASES = {
    "basic": lambda: {"apiVersion": "v1", "kind": "List", "items": bench.generate("basic", 120, 160, 40, 5)},
    "mixed": lambda: {"apiVersion": "v1", "kind": "List", "items": bench.generate("mixed", 100, 200, 80, 6)},
    "topology": lambda: topology_cluster(21, 90, 120, 60),
}


@pytest.mark.parametrize("name", list(CASES))
def test_totals_are_the_weighted_arrays_sum_up_to_a_constant(name: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(CASES[name]()))
    seen: Counter[str] = Counter()
    real = Framework.run_score_totals

    def spy(self: Framework, state, pod, nodes):  # type: ignore[no-untyped-def]
        totals, st = real(self, state, pod, nodes)
        arrays, st2 = self.run_score_arrays(state, pod, nodes)
        assert st is None and st2 is None
        summed = sum(arrays.values(), np.zeros(len(nodes), dtype=np.int64))
        diff = summed - (totals if totals is not None else 0)
        assert (diff == diff[0]).all(), (pod.key, diff)
        hit = feasible_rows(state, nodes)
        assert hit is not None
        for step in self._score_steps:
            if step.name not in arrays:
                continue
            arr = arrays[step.name]
            v = step.constant(state, pod, hit[0]) if step.constant is not None else None
            if v is not None:
                seen["constant"] += 1
                assert (arr == v * step.weight).all(), step.name
            if step.in_range:
                assert arr.min() >= 0 and arr.max() <= MAX_NODE_SCORE * step.weight, step.name
        rows = hit[1]
        lo, hi = int(rows[0]), int(rows[-1]) + 1
        seen["wrapped" if hi <= lo else "contiguous" if hi - lo == len(rows) else "holes"] += 1
        return totals, st

    monkeypatch.setattr(Framework, "run_score_totals", spy)
    reg = in_tree_registry()
    res = Simulation(load_snapshot([str(path)]), load_config(None, reg), reg, SimulationOptions()).run()
    assert res.bindings
    assert seen["constant"] and seen["holes"] + seen["contiguous"], seen
    assert seen[{"basic": "wrapped", "mixed": "holes", "topology": "holes"}[name]], seen


@pytest.mark.parametrize("weight", [1, 2, 3, 100], ids=["one", "two", "three", "hundred"])
@pytest.mark.parametrize("first", [True, False], ids=["first", "added"])
def test_weighted_sums_with_the_kept_weight_array(weight: int, first: bool) -> None:
    """``_add_weighted`` with the step's 0-d weight array gives the sums of the plain weight (and never
    writes into the plugin's own array)."""
    import numpy as np

    from pysched.framework.runtime import _add_weighted, _ScoreStep

    step = _ScoreStep(type("P", (), {"name": "P", "HAS_NORMALIZE": False})(), weight)  # type: ignore[arg-type]
    scores = np.array([0, 1, 50, 100], dtype=np.int64)
    base = None if first else np.array([7, 0, 3, 100], dtype=np.int64)
    want = _add_weighted(None if base is None else base.copy(), scores, weight)
    got = _add_weighted(None if base is None else base.copy(), scores, weight, step.weight0)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert scores.tolist() == [0, 1, 50, 100] and got is not scores
