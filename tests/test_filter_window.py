"""The batched Filter's window (``fastfilter._window``) is the sequential loop's: from the rotating start
index, the first ``to_find`` passing nodes, ending before the next passing node after the count (else
after every node). It searches a short stretch first and the whole rotation only when that stretch holds
too few passing nodes: both must give the loop's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.scheduler import fastfilter
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.columns import ROWS_KEY
from pysched.snapshot.loader import load_snapshot
from tests.builders import load_bench


def _window(mask: np.ndarray | None, start: int, n: int, to_find: int) -> tuple[np.ndarray, int]:
    rows, end, low = fastfilter._window(mask, start, n, to_find)
    assert rows.flags.writeable  # the caller's own
    # the place of the smallest row, when given: 0 when the rows ascend, else where the second run starts
    listed = rows.tolist()
    if low >= 0:
        assert listed[low:] == sorted(listed[low:]) and listed[:low] == sorted(listed[:low])
        assert not listed or listed[low] == min(listed)
    return rows, end


def _loop(mask: list[bool] | None, start: int, n: int, to_find: int) -> tuple[list[int], int]:
    """The per-node loop of ``Scheduler._find_nodes_that_pass_filters``: rows kept, positions examined."""
    rows: list[int] = []
    for i in range(n):
        row = (start + i) % n
        if mask is None or mask[row]:
            if len(rows) >= to_find:
                return rows, i
            rows.append(row)
    return rows, n


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_window_is_the_loops(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 400), label="n")
    start = data.draw(st.integers(0, n - 1), label="start")
    to_find = data.draw(st.integers(1, n + 2), label="to_find")
    dense = data.draw(st.floats(0.0, 1.0), label="share passing")
    every = data.draw(st.booleans(), label="no mask")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    arr = None if every else np.random.default_rng(seed).random(n) < dense
    mask = None if arr is None else arr.tolist()
    rows, end = _window(arr, start, n, to_find)
    assert (rows.tolist(), end) == _loop(mask, start, n, to_find)


def test_short_stretch_and_whole_rotation() -> None:
    n = 1000
    mask = np.zeros(n, dtype=bool)
    mask[::3] = True  # a third passes: the first stretch (2 * 11 + 64 rows) holds enough for 10
    rows, end = _window(mask, 990, n, 10)
    assert (rows.tolist(), end) == _loop(mask.tolist(), 990, n, 10)
    assert rows.tolist()[:4] == [990, 993, 996, 999] and rows.tolist()[4] == 0
    mask[:] = False
    mask[500] = mask[700] = True  # too few in the stretch: the whole rotation is searched
    rows, end = _window(mask, 990, n, 1)
    assert (rows.tolist(), end) == ([500], 710)
    rows, end = _window(mask, 990, n, 5)
    assert (rows.tolist(), end) == ([500, 700], n)
    mask[:10] = True  # exactly the count in the stretch, the next passing node far beyond it
    rows, end = _window(mask, 0, n, 10)
    assert (rows.tolist(), end) == (list(range(10)), 500)


@pytest.mark.parametrize(("start", "to_find", "every"), [
    (700, 420, 1), (700, 420, 3), (999, 5, 2), (600, 400, 1), (580, 420, 1), (900, 420, 50), (1, 999, 1),
], ids=["wraps-all-pass", "wraps-a-third", "last-row", "ends-on-the-last-row", "one-short", "too-few", "from-1"])
def test_window_that_must_wrap_is_the_loops(start: int, to_find: int, every: int) -> None:
    """Fewer rows from the start row to the last one than the window holds (one search over every row,
    split at the start row): the loop's rows and end, whether or not enough rows pass."""
    n = 1000
    mask = np.zeros(n, dtype=bool)
    mask[::every] = True
    mask[start] = False  # (the start row itself rejected)
    rows, end = _window(mask, start, n, to_find)
    assert (rows.tolist(), end) == _loop(mask.tolist(), start, n, to_find)


@pytest.mark.parametrize(("start", "every"), [
    (300, 1), (300, 2), (400, 3), (94, 2), (93, 2), (93, 3), (578, 1), (500, 5),
], ids=["fits-all-pass", "fits-half", "wraps-a-third", "stretch-ends-on-the-last-row", "stretch-before-it",
        "stretch-before-it-too-few", "one-row-to-spare", "wraps-a-fifth"])
def test_window_whose_stretch_reaches_the_last_row_is_the_loops(start: int, every: int) -> None:
    """The stretch searched first would reach the last row (start + 2 * (to_find + 1) + 64 >= n): one
    search over every row, split at the start row, whether the window ends before the last row or goes
    on at row 0; just before that bound the stretch is searched alone."""
    n, to_find = 1000, 420
    mask = np.zeros(n, dtype=bool)
    mask[::every] = True
    mask[start] = False  # (the start row itself rejected)
    rows, end = _window(mask, start, n, to_find)
    assert (rows.tolist(), end) == _loop(mask.tolist(), start, n, to_find)


def test_feasible_nodes_are_the_window_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a generated cluster: every batched window's feasible list is its rows' nodes, in order (the list
    is a slice of the node list when no node of the window was rejected, wrapping at the end)."""
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": load_bench().generate("basic", 300, 150, 40, 1)}))
    real = fastfilter.find_feasible
    seen = {"windows": 0, "wrapped": 0}

    def spy(fwk: Any, cluster: Any, state: Any, pod: Any, statuses: Any, start: int, to_find: int,
            *rest: Any) -> Any:
        out = real(fwk, cluster, state, pod, statuses, start, to_find, *rest)
        if out is not None:
            feasible, rows, cols = state.read(ROWS_KEY)
            assert feasible is out
            assert [ni.name for ni in out] == cols.names_arr[rows].tolist()
            seen["windows"] += 1
            seen["wrapped"] += bool(len(rows)) and int(rows[-1]) < start
        return out

    monkeypatch.setattr("pysched.scheduler.cycle.find_feasible", spy)
    reg = in_tree_registry()
    Simulation(load_snapshot([str(path)]), load_config(None, reg), reg, SimulationOptions()).run()
    assert seen["windows"] > 100 and seen["wrapped"] > 10


def _small_nodes_cluster() -> dict:
    """1,000 small nodes (some tainted, some with an extended resource), pods that fill them: windows with
    rows rejected by NodeResourcesFit (several reasons) and TaintToleration."""
    items: list[dict] = []
    for i in range(1000):
        alloc = {"cpu": "1", "memory": "2Gi", "pods": "4" if i % 7 else "1"}
        if i % 5 == 0:
            alloc["example.com/gpu"] = "1"
        spec: dict = {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]} if i % 11 == 0 else {}
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i:04d}", "labels": {}},
                      "spec": spec, "status": {"allocatable": alloc, "capacity": alloc}})
    for j in range(700):
        req = {"cpu": ["300m", "600m", "100m"][j % 3], "memory": ["256Mi", "1Gi", "1500Mi"][j % 3]}
        if j % 9 == 0:
            req["example.com/gpu"] = "1"
        spec = {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": req}}]}
        if j % 4 == 0:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "x", "effect": "NoSchedule"}]
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"p{j:04d}", "namespace": "default", "uid": f"u{j}",
                                   "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": spec})
    return {"apiVersion": "v1", "kind": "List", "items": items}


def test_stretch_verdicts_give_the_whole_row_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NodeResourcesFit's verdict asked for the searched stretch only (``batch_filter_span``) gives, cycle
    by cycle, the same feasible nodes, rows, end and rejected nodes' statuses (code, reasons, plugin) as
    the whole-row verdicts."""
    from pysched.framework.interface import NodeToStatus

    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(_small_nodes_cluster()))
    real = fastfilter.find_feasible
    real_span = fastfilter._span_window
    seen = {"span": 0, "span with rejections": 0}

    def spy(fwk: Any, cluster: Any, state: Any, pod: Any, statuses: Any, start: int, to_find: int,
            *rest: Any) -> Any:
        ref_statuses = NodeToStatus()
        monkeypatch.setattr(fastfilter, "_span_window", lambda *a: None)
        ref = real(fwk, cluster, state, pod, ref_statuses, start, to_find, *rest)
        ref_rows = state.read(ROWS_KEY)[1].tolist() if ref is not None else None
        monkeypatch.setattr(fastfilter, "_span_window", counting)
        out = real(fwk, cluster, state, pod, statuses, start, to_find, *rest)
        assert (ref is None) == (out is None)
        if out is not None:
            assert [ni.name for ni in out] == [ni.name for ni in ref]
            assert state.read(ROWS_KEY)[1].tolist() == ref_rows
            assert len(statuses) == len(ref_statuses)

            def flat(s: Any) -> list:
                return [(k, v.code, tuple(v.reasons), v.plugin) for k, v in s.statuses.items()]
            assert flat(statuses) == flat(ref_statuses)
        return out

    def counting(*a: Any) -> Any:
        got = real_span(*a)
        if got is not None:
            seen["span"] += 1
            seen["span with rejections"] += len(a[2]) > 0
        return got

    monkeypatch.setattr("pysched.scheduler.cycle.find_feasible", spy)
    reg = in_tree_registry()
    cfg = load_config(None, reg)
    cfg.percentage_of_nodes_to_score = 5  # 100 nodes to find among 1,000: a stretch of 266 rows
    Simulation(load_snapshot([str(path)]), cfg, reg, SimulationOptions()).run()
    assert seen["span"] > 100 and seen["span with rejections"] > 50, seen


# ------------------------------------------------------------------ the feasible nodes as rows (RowNodes)

ROW_NODE_CASES = {
    "gathered rows": ([1, 4, 5, 9], -1),
    "consecutive rows": ([3, 4, 5], 3),
    "consecutive rows wrapping past the last": ([8, 9, 0, 1], 8),
    "one row": ([7], -1),
    "no row": ([], -1),
}


@pytest.mark.parametrize("name", list(ROW_NODE_CASES))
def test_row_nodes_are_their_rows_nodes(name: str) -> None:
    """A ``RowNodes`` lists its rows' nodes, in row order, built once; ``feasible_rows`` knows it and the
    list it built, no other list of the same nodes."""
    from pysched.framework.cycle_state import CycleState
    from pysched.snapshot.columns import RowNodes, columns_for, feasible_rows, node_list
    from tests.builders import cluster_state, make_node

    rows, start = ROW_NODE_CASES[name]
    state = cluster_state([make_node(f"n{i}") for i in range(10)])
    cols = columns_for(state)
    arr = np.array(rows, dtype=np.int64)
    nodes = RowNodes(cols, arr, start=start)
    expected = [state.node_infos[i] for i in rows]
    assert len(nodes) == len(rows) and nodes.built is None
    cycle = CycleState()
    cycle.write(ROWS_KEY, (nodes, arr, cols))
    hit = feasible_rows(cycle, nodes)
    assert hit is not None and hit[0] is cols and hit[1] is arr
    assert feasible_rows(cycle, list(expected)) is None  # (the same nodes, another list)
    built = node_list(nodes)
    assert built == expected and [ni.name for ni in nodes] == [f"n{i}" for i in rows]
    assert node_list(nodes) is built and nodes.as_list() is built
    assert feasible_rows(cycle, built) == hit
    if rows:
        assert nodes[0] is expected[0] and nodes[-1] is expected[-1]


def test_pre_score_gets_a_list_unless_it_takes_rows() -> None:
    """``Framework.run_pre_score`` hands a ``RowNodes`` as it is only to plugins declaring
    ``PRE_SCORE_ROWS``; every other plugin gets the list of its nodes."""
    from pysched.framework.cycle_state import CycleState
    from pysched.framework.runtime import Framework
    from pysched.snapshot.columns import RowNodes, columns_for
    from tests.builders import cluster_state, make_node

    seen: dict[str, object] = {}

    class Plain:
        name = "Plain"

        def pre_score(self, state: object, pod: object, nodes: object) -> None:
            seen[self.name] = nodes

    class TakesRows(Plain):
        name = "TakesRows"
        PRE_SCORE_ROWS = True

    state = cluster_state([make_node(f"n{i}") for i in range(4)])
    nodes = RowNodes(columns_for(state), np.array([0, 2], dtype=np.int64))
    fwk = Framework.__new__(Framework)
    fwk.pre_score = [Plain(), TakesRows()]  # type: ignore[list-item]
    assert fwk.run_pre_score(CycleState(), None, nodes) is None  # type: ignore[arg-type]
    assert seen["TakesRows"] is nodes
    assert type(seen["Plain"]) is list and seen["Plain"] == [state.node_infos[0], state.node_infos[2]]


_DEFAULT_FILTERS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                    "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                    "PodTopologySpread", "InterPodAffinity", "DynamicResources"]


@pytest.mark.parametrize("skip", [set(), {"NodePorts"}, {"NodeName", "InterPodAffinity", "DynamicResources"},
                                  set(_DEFAULT_FILTERS), {"NotAFilterPlugin", "VolumeZone"}],
                         ids=["none", "one", "several", "every-plugin", "with-a-name-no-filter-has"])
def test_active_filters_are_the_batch_filters_not_skipped_in_filter_order(skip: set[str]) -> None:
    """``fastfilter.active_filters``: the framework's ``batch_filters`` entries of the plugins PreFilter did
    not skip, in Filter order; the same list object for an equal set of skipped plugins (kept per set)."""
    from pysched.framework.interface import Handle
    from pysched.framework.runtime import Framework
    from pysched.snapshot.cluster import Cluster, ClusterState

    registry = in_tree_registry()
    fwk = Framework(load_config(None, registry).profiles[0], registry, Handle(ClusterState(Cluster())))
    assert [name for _, name, _, _, _ in fwk.batch_filters] == _DEFAULT_FILTERS
    got = fastfilter.active_filters(fwk, skip)
    assert got == [entry for entry in fwk.batch_filters if entry[1] not in skip]
    assert [at for at, *_ in got] == sorted(at for at, *_ in got)
    assert fastfilter.active_filters(fwk, set(skip)) is got
    more = skip | {"NodeResourcesFit"}
    other = fastfilter.active_filters(fwk, more)
    assert [name for _, name, *_ in other] == [n for n in _DEFAULT_FILTERS if n not in more]
    assert (other is got) == (more == skip)  # (another set of skipped plugins: its own list)
