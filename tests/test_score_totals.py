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


@pytest.mark.parametrize("kind", ["int64-array", "int64-strided-view", "int32-array", "list", "tuple"],
                         ids=["int64-array", "int64-strided-view", "int32-array", "list", "tuple"])
def test_batch_normalize_results_become_int64_arrays(kind: str) -> None:
    """``_score_array`` takes a plugin's ``batch_normalize`` result as an int64 array: an int64 array (or
    view) as it is, anything else through ``np.asarray`` (the same values)."""
    from pysched.framework.runtime import _ScoreStep

    made: list[object] = []

    class Plugin:
        name = "P"
        HAS_NORMALIZE = True
        BATCH_SCORES_IN_RANGE = True

        def batch_score(self, state: object, pod: object, cols: object, rows: np.ndarray) -> np.ndarray:
            return np.array([3, 1, 2], dtype=np.int64)

        def batch_normalize(self, state: object, pod: object, scores: np.ndarray) -> object:
            doubled = [2 * v for v in scores.tolist()]
            out: object = {"int64-array": np.array(doubled, dtype=np.int64),
                           "int64-strided-view": np.array([x for v in doubled for x in (v, -1)], dtype=np.int64)[::2],
                           "int32-array": np.array(doubled, dtype=np.int32), "list": doubled,
                           "tuple": tuple(doubled)}[kind]
            made.append(out)
            return out

    step = _ScoreStep(Plugin(), 1)  # type: ignore[arg-type]
    arr, st = Framework._score_array(None, step, None, None, [], (None, np.arange(3)))  # type: ignore[arg-type]
    assert st is None and arr is not None
    assert type(arr) is np.ndarray and arr.dtype == np.int64 and arr.tolist() == [6, 2, 4]
    assert (arr is made[0]) == kind.startswith("int64")
