"""The batched Filter of a cluster with nominated pods decides as the per-node reference path.

Nodes holding pods nominated by preemption are judged per node (with those pods) inside the batched
window, and the rejected nodes' statuses are deferred: built only when something reads them (a failed
cycle, --trace). Whenever they are read -- even after the cycle bound its pod -- they must be the
reference path's statuses: same nodes, same order, same code, plugin and reasons. The JSON output (no
trace: messages built from the deferred statuses) must be byte-identical too."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pysched.scheduler.fastfilter as ff
from pysched.framework.interface import NodeToStatus
from pysched.framework.status import Status
from pysched.plugins.nodeunschedulable import NodeUnschedulable
from pysched.report.serialize import to_json
from pysched.scheduler.cycle import Scheduler
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.columns import columns_for
from pysched.snapshot.loader import load_snapshot
from tests.test_differential import CONFIG, REGISTRY, _first_difference, _write, bench


def _key(st: Status) -> tuple:
    return int(st.code), st.plugin, tuple(st.reasons)


def _run(path: Path, batched: bool, monkeypatch: pytest.MonkeyPatch, seen: Counter[str]) -> tuple[str, list]:
    """The JSON output and, per cycle, the Filter statuses read after the cycle ended."""
    per_cycle: list[tuple[str, list]] = []
    current: list[NodeToStatus] = []
    real_find = Scheduler._find_nodes_that_pass_filters
    real_one = Scheduler.schedule_one
    real_window = ff._window_with_nominated

    def find(self: Scheduler, fwk: Any, state: Any, pod: Any, statuses: NodeToStatus, nodes: Any) -> Any:
        current.append(statuses)
        return real_find(self, fwk, state, pod, statuses, nodes)

    def one(self: Scheduler, fwk: Any, pod: Any, pass_no: int, trace_this: bool) -> Any:
        current.clear()
        tr = real_one(self, fwk, pod, pass_no, trace_this)
        for statuses in current:  # read late: the pod may be bound, the columns changed since
            if statuses._deferred is not None:
                seen["read after the cycle (deferred)"] += 1
            per_cycle.append((f"{pass_no} {pod.key} {tr.outcome}",
                              [(name, _key(st)) for name, st in statuses.statuses.items()]))
        return tr

    def window(*args: Any) -> Any:
        passed: np.ndarray = args[7]
        before = passed.copy()
        out = real_window(*args)
        if out is not None:
            seen["nominated window"] += 1
            seen["verdict flipped to pass"] += int((passed & ~before).sum())
            seen["verdict flipped to reject"] += int((~passed & before).sum())
            statuses: NodeToStatus = args[3]
            if statuses._deferred is not None:
                seen["deferred"] += 1
        return out

    with monkeypatch.context() as m:
        m.setattr(Scheduler, "_find_nodes_that_pass_filters", find)
        m.setattr(Scheduler, "schedule_one", one)
        m.setattr(ff, "_window_with_nominated", window)
        result = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions(batched=batched)).run()
    return to_json(result.to_dict()), per_cycle


@pytest.mark.parametrize("seed", [3, 7])
def test_deferred_statuses_with_nominated_pods_equal_the_reference_paths(
        seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, 250, 200, 2200, seed)
    seen: Counter[str] = Counter()
    fast, fast_statuses = _run(path, True, monkeypatch, seen)
    reference, reference_statuses = _run(path, False, monkeypatch, Counter())
    assert fast == reference, _first_difference(fast, reference)
    assert len(fast_statuses) == len(reference_statuses)
    for got, want in zip(fast_statuses, reference_statuses, strict=True):
        assert got == want, got[0]
    # the branches this is about were taken
    assert seen["nominated window"] >= 10 and seen["deferred"] >= 10, seen
    assert seen["read after the cycle (deferred)"] >= 10, seen
    assert seen["verdict flipped to reject"] >= 1, seen
    assert sum(1 for _, sts in fast_statuses if sts) >= 50


def test_node_unschedulable_verdict_equals_its_filter(tmp_path: Path) -> None:
    """Cordoned nodes, pods with and without a toleration of the unschedulable taint: the verdict's rows
    and statuses are the per-node filter's."""
    doc = bench.generate_all(120, 60, 300, 5)
    for i, tolerations in enumerate(([{"operator": "Exists"}],
                                     [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}],
                                     [{"key": "node.kubernetes.io/unschedulable", "effect": "NoExecute",
                                       "operator": "Exists"}])):
        doc["items"].append({"apiVersion": "v1", "kind": "Pod",
                             "metadata": {"name": f"tolerating-{i}", "namespace": "default", "uid": f"t{i}"},
                             "spec": {"tolerations": tolerations, "containers": [{"name": "c", "image": "x"}]}})
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(doc))
    sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions())
    cols = columns_for(sim.state)
    plugin = NodeUnschedulable()
    cordoned = sum(ni.node.unschedulable for ni in cols.infos)
    assert 0 < cordoned < cols.n
    kinds: Counter[str] = Counter()
    for pod in sim.cluster.pods:
        v = plugin.batch_filter(None, pod, cols)  # type: ignore[arg-type]
        assert v is not None
        want = [plugin.filter(None, pod, ni) for ni in cols.infos]  # type: ignore[arg-type]
        assert v.ok.tolist() == [st is None for st in want]
        bad = np.flatnonzero(~v.ok)
        assert [_key(st) for st in v.statuses(bad)] == [_key(want[i]) for i in bad.tolist()]  # type: ignore[arg-type]
        kinds["every row passes" if not len(bad) else "cordoned rows rejected"] += 1
    assert kinds == {"every row passes": 2, "cordoned rows rejected": len(sim.cluster.pods) - 2}, kinds
