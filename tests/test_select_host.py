"""The batched host choice (``Scheduler._select_host_batched``: one argmax over the weighted score arrays
and the nodes' name ranks) picks the node the per-node choice (``_select_host``: highest total, ties to
the smallest name) picks, for any names, window order, scores and weights; and the range check every
plugin's score array goes through on that path."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from pysched.framework.runtime import _beyond_range
from pysched.scheduler.cycle import CycleOptions, Scheduler, first_best_in_row_order
from pysched.snapshot.columns import ROWS_KEY, NodeColumns, RowNodes
from tests.builders import cluster_state, make_node

names = st.lists(st.text(alphabet="ab-0z9", min_size=1, max_size=4), min_size=1, max_size=14, unique=True)


@settings(max_examples=80, deadline=None)
@given(names, st.data())
def test_batched_choice_is_the_per_node_choice(node_names: list[str], data: st.DataObject) -> None:
    cols = NodeColumns(cluster_state([make_node(n) for n in node_names], []))
    n = cols.n
    rows = np.array(data.draw(st.permutations(range(n)))[:data.draw(st.integers(1, n))], dtype=np.int64)
    feasible = cols.infos_arr[rows].tolist()
    weights = data.draw(st.lists(st.integers(1, 5), max_size=4))
    top = data.draw(st.sampled_from([1, 3, MAX_NODE_SCORE]))  # few distinct values: many ties
    arrays = {f"p{i}": np.array(data.draw(st.lists(st.integers(0, top), min_size=len(rows), max_size=len(rows))),
                                dtype=np.int64) * w for i, w in enumerate(weights)}
    totals = [sum(int(a[k]) for a in arrays.values()) for k in range(len(rows))] if arrays else [1] * len(rows)
    sched = Scheduler(None, CycleOptions())  # type: ignore[arg-type]
    want = sched._select_host([NodeScore(ni.name, t) for ni, t in zip(feasible, totals, strict=True)])
    state = CycleState()
    state.write(ROWS_KEY, (feasible, rows, cols))
    most = sum(weights) * MAX_NODE_SCORE
    assert sched._select_host_batched(state, feasible, dict(arrays), bool(weights), most) == want
    # an unknown bound takes the general form: the same node
    assert sched._select_host_batched(state, feasible, dict(arrays), bool(weights), 0) == want


def test_random_tie_break_still_draws_among_the_tied_nodes() -> None:
    cols = NodeColumns(cluster_state([make_node(n) for n in ("c", "a", "b")], []))
    rows = np.array([0, 1, 2], dtype=np.int64)
    feasible = cols.infos_arr[rows].tolist()
    state = CycleState()
    state.write(ROWS_KEY, (feasible, rows, cols))
    arrays = {"p": np.array([5, 5, 1], dtype=np.int64)}
    picks = {Scheduler(None, CycleOptions(tie_break="random", rng=random.Random(seed)))  # type: ignore[arg-type]
             ._select_host_batched(state, feasible, dict(arrays), True, MAX_NODE_SCORE) for seed in range(40)}
    assert picks == set(cols.names_arr[:2].tolist())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), max_size=30) | st.lists(st.integers(-3, 103), max_size=30),
       st.sampled_from([np.int64, np.int32, np.float64]), st.booleans())
def test_the_score_range_check_finds_every_score_outside_0_100(values: list[int], dtype: type, strided: bool) -> None:
    """``run_score_arrays``' range check (one argmax over the unsigned view of an int64 array) flags an
    array exactly when some score is below MinNodeScore or above MaxNodeScore."""
    arr = np.array(values or [0], dtype=np.int64).astype(dtype)
    if strided:
        arr = arr[::2]
    want = any(v < MIN_NODE_SCORE or v > MAX_NODE_SCORE for v in arr.tolist())
    assert _beyond_range(arr) == want


@settings(max_examples=120, deadline=None)
@given(st.integers(2, 14), st.data())
def test_window_ordered_choice_is_the_per_node_choice(n: int, data: st.DataObject) -> None:
    """With the node names in row order or not, a ``RowNodes``' rows in window order (ascending from the
    start row, wrapping to row 0) get the per-node choice: the highest total, ties to the smallest name."""
    # nodes in zones are listed round-robin over the zones (node-tree order): names out of row order
    zones = data.draw(st.lists(st.sampled_from(["", "a", "b"]), min_size=n, max_size=n))
    nodes = [make_node(f"n{i:02d}") for i in range(n)]
    for node, zone in zip(nodes, zones, strict=True):
        if zone:
            node.label("topology.kubernetes.io/zone", zone)
    cols = NodeColumns(cluster_state(nodes, []))
    start = data.draw(st.integers(0, n - 1))
    window = [(start + p) % n for p in range(n)]
    rows = np.array([r for r in window if data.draw(st.booleans(), label=f"row {r}")] or [start], dtype=np.int64)
    top = data.draw(st.sampled_from([0, 1, 3, MAX_NODE_SCORE]))
    values = data.draw(st.lists(st.integers(0, top), min_size=len(rows), max_size=len(rows)))
    feasible = RowNodes(cols, rows)
    want = Scheduler(None, CycleOptions())._select_host(  # type: ignore[arg-type]
        [NodeScore(cols.names_arr[r], v) for r, v in zip(rows.tolist(), values, strict=True)])
    state = CycleState()
    state.write(ROWS_KEY, (feasible, rows, cols))
    sched = Scheduler(None, CycleOptions())  # type: ignore[arg-type]
    totals = np.array(values, dtype=np.int64)
    assert sched._select_from_totals(state, feasible, totals.copy(), MAX_NODE_SCORE) == want
    listed = cols.names_arr.tolist()
    assert cols.names_sorted == (listed == sorted(listed))


@pytest.mark.parametrize(("totals", "rows", "want"), [
    ([3, 5, 5], [0, 1, 2], 1),  # not wrapped: the first highest
    ([5, 5, 1, 5], [6, 7, 0, 1], 3),  # wrapped: row 1 is the smallest row with 5
    ([5, 1, 2], [6, 0, 1], 0),  # wrapped, the highest only before the wrap
    ([1, 2, 9], [6, 0, 1], 2),  # wrapped, the highest only after the wrap
    ([4, 4], [9, 0], 1),  # row 0 after the wrap wins the tie
], ids=["ascending", "wrapped-tie", "before-wrap", "after-wrap", "two-rows"])
def test_first_best_in_row_order(totals: list[int], rows: list[int], want: int) -> None:
    assert first_best_in_row_order(np.array(totals, dtype=np.int64), np.array(rows, dtype=np.int64)) == want
    # the place of the smallest row given (the fast filter's ``RowNodes.low``): the same choice
    low = rows.index(min(rows))
    assert first_best_in_row_order(np.array(totals, dtype=np.int64), np.array(rows, dtype=np.int64), low) == want
