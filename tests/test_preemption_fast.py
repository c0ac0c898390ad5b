"""Preemption's cheap paths are the same semantics: nodes without victims are judged without copies,
the topology plugins' PreFilter clones share their maps until one side writes, and nodes with
nominated pods are judged per node inside the batched Filter window."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import pysched.scheduler.cycle as cycle_mod
from pysched.framework.cycle_state import CycleState
from pysched.framework.status import Code
from pysched.plugins import defaultpreemption as dp, interpodaffinity as ipa, podtopologyspread as pts
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from pysched.snapshot.nodeinfo import NodeInfo
from tests import test_interpodaffinity as tipa, test_podtopologyspread as tpts
from tests.test_differential import CONFIG, REGISTRY, _both, _first_difference, _write

# --------------------------------------------------------------------------- copy on write


def test_spread_clone_and_original_never_see_each_others_writes() -> None:
    incoming = tpts.pod("p", {"foo": ""}, constraints=[tpts.tsc("zone", 1, selector=tpts.FOO),
                                                       tpts.tsc(tpts.HOST, 1, selector=tpts.FOO)])
    cs, pl, state = tpts._prefiltered([tpts.zn("a", "z1"), tpts.zn("b", "z2")],
                                      tpts.pods_on("a", 1, {"foo": ""}), incoming)
    a, b = cs.by_name["a"], cs.by_name["b"]
    clone = state.clone()
    grandchild = clone.clone()
    # the original writes after the clones were taken: neither clone sees it
    assert pl.add_pod(state, incoming, tpts.pod("n1", {"foo": ""}, on="b"), b) is None
    s, c, g = (x.read(pts.PRE_FILTER_STATE_KEY) for x in (state, clone, grandchild))
    assert s.tp_value_to_match_num == [{"z1": 1, "z2": 1}, {"a": 1, "b": 1}]
    assert c.tp_value_to_match_num == g.tp_value_to_match_num == [{"z1": 1, "z2": 0}, {"a": 1, "b": 0}]
    # a clone writes: the original and its own clone keep their counts
    assert pl.remove_pod(clone, incoming, tpts.pod("a-p0", {"foo": ""}, on="a"), a) is None
    assert c.tp_value_to_match_num == [{"z1": 0, "z2": 0}, {"a": 0, "b": 0}]
    assert s.tp_value_to_match_num == [{"z1": 1, "z2": 1}, {"a": 1, "b": 1}]
    assert g.tp_value_to_match_num == [{"z1": 1, "z2": 0}, {"a": 1, "b": 0}]
    assert pl.filter(clone, incoming, a) is None
    assert pl.filter(grandchild, incoming, a).code == Code.Unschedulable
    assert (g.critical_paths[0].v0, g.critical_paths[0].n0) == ("z2", 0)


def test_affinity_clone_and_original_never_see_each_others_writes() -> None:
    incoming = tipa.pod("p", aff=tipa.affinity(req_anti=[tipa.term(tipa.ZONE, tipa.ml(app="web"))]))
    cs, pl, state = tipa._prefiltered([tipa.pod("e", {"app": "web"}, on="a")], incoming)
    c_node = cs.by_name["c"]
    clone = state.clone()
    web = tipa.pod("n", {"app": "web"})
    assert pl.add_pod(state, incoming, web, c_node) is None  # the original writes first
    assert pl.filter(state, incoming, c_node).code == Code.Unschedulable
    assert pl.filter(clone, incoming, c_node) is None
    assert pl.add_pod(clone, incoming, web, c_node) is None
    assert pl.remove_pod(state, incoming, web, c_node) is None
    assert pl.filter(state, incoming, c_node) is None
    assert pl.filter(clone, incoming, c_node).code == Code.Unschedulable
    assert state.read(ipa.PRE_FILTER_STATE_KEY).anti_affinity_counts == {(tipa.ZONE, "z1"): 1}


# --------------------------------------------------------------------------- nodes without victims


def _list_file(path: Path, items: list[dict]) -> Path:
    """``items`` written to ``path`` as a JSON ``List``."""
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _snapshot(tmp_path: Path, nodes: list[str], pods: list[tuple[str, int, str]]) -> Path:
    items = [{"apiVersion": "v1", "kind": "Node",
              "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
              "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}} for n in nodes]
    for name, prio, on in pods:
        spec: dict[str, Any] = {"priority": prio, "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "800m"}}}]}
        status: dict[str, Any] = {"phase": "Pending"}
        if on:
            spec["nodeName"] = on
            status = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}
        items.append({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": name, "namespace": "default", "uid": name,
                                   "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": spec, "status": status})
    return _list_file(tmp_path / "cluster.json", items)


def test_nodes_without_lower_priority_pods_are_rejected_without_a_dry_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes 0-2 hold a pod of the preemptor's priority, node 3 a lower one: only node 3 is copied
    and dry-run; the others get upstream's status for a node without victims, in node order."""
    nodes = [f"n{i}" for i in range(4)]
    pods = [(f"run{i}", 100 if i < 3 else 1, f"n{i}") for i in range(4)] + [("hi", 100, "")]
    cloned: list[str] = []
    real_clone = NodeInfo.clone

    def spy(self: NodeInfo) -> NodeInfo:
        cloned.append(self.name)
        return real_clone(self)

    monkeypatch.setattr(NodeInfo, "clone", spy)
    result = Simulation(load_snapshot([str(_snapshot(tmp_path, nodes, pods))]), CONFIG, REGISTRY,
                        SimulationOptions(passes=1)).run()
    (tr,) = result.cycles
    assert tr.outcome == "Nominated" and tr.nominated_node == "n3" and tr.victims == ["default/run3"]
    details: dp.PreemptionDetails = tr.preemption
    assert details.potential_nodes == nodes
    assert {n: (st.code, st.message()) for n, st in details.node_statuses.items()} == {
        n: (Code.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod")
        for n in ("n0", "n1", "n2")}
    assert [c.node for c in details.candidates] == ["n3"]
    assert "n3" in cloned and not {"n0", "n1", "n2"} & set(cloned)


# --------------------------------------------------------------------------- nominated pods, batched Filter


def test_nominated_nodes_are_judged_inside_the_batched_window(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """After a preemption nominates a pod, later cycles stay on the batched Filter (only the nodes
    with nominated pods of equal or higher priority are judged per node, with those pods) and print
    the same --trace JSON as the reference path."""
    calls: Counter[str] = Counter()
    real = cycle_mod.find_feasible

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        nominated = args[7] if len(args) > 7 else kwargs.get("nominated", frozenset())
        calls["with nominated nodes" if nominated else "plain"] += 1
        if nominated and out is not None:
            calls["batched with nominated nodes"] += 1
        return out

    monkeypatch.setattr(cycle_mod, "find_feasible", spy)
    fast, reference, cycles = _both(_write(tmp_path, 250, 200, 2200, 3))
    assert fast == reference, _first_difference(fast, reference)
    assert sum(1 for c in cycles if c.outcome == "Nominated") >= 1
    assert calls["batched with nominated nodes"] >= 10, calls


# --------------------------------------------------------------------------- dry runs of the Filter's tail


def _preemption_statuses(cycles: list) -> list:
    """Every dry run's outcome per node, as the traces, explain and the summary read them."""
    out = []
    for c in cycles:
        d = c.preemption
        if d is None:
            continue
        out.append((c.pass_no, c.pod, d.potential_nodes, [(x.node, [v.key for v in x.victims], x.num_pdb_violations)
                                                          for x in d.candidates],
                    {n: (st.code, st.plugin, st.reasons) for n, st in d.node_statuses.items()}))
    return out


def _split_then_full(path: Path, batched: bool, monkeypatch: pytest.MonkeyPatch,
                     spies: dict[str, Any]) -> tuple[list[tuple[str, list]], Any]:
    """``path`` simulated twice with --trace: with the Filter split (``spies`` set on DefaultPreemption),
    then with the full dry run on every node. Both runs' JSON and dry-run statuses, and the last result."""
    runs = []
    for split in (True, False):
        with monkeypatch.context() as m:
            if split:
                for name, value in spies.items():
                    m.setattr(dp.DefaultPreemption, name, value)
            else:
                m.setattr(dp.DefaultPreemption, "_filter_split", lambda self, state: None)
            result = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY,
                                SimulationOptions(trace=True, batched=batched)).run()
        runs.append((json.dumps(result.to_dict(), sort_keys=True), _preemption_statuses(result.cycles)))
    return runs, result


def _pod_doc(name: str, prio: int, cpu: str, labels: dict[str, str], on: str = "", **spec: Any) -> dict:
    """A Pod document: bound to ``on`` and running when given, else pending."""
    status = {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"} if on else {"phase": "Pending"}
    body: dict[str, Any] = {"priority": prio, "containers": [
        {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}], **spec}
    if on:
        body["nodeName"] = on
    return {"apiVersion": "v1", "kind": "Pod", "spec": body, "status": status,
            "metadata": {"name": name, "namespace": "default", "uid": name, "labels": labels,
                         "creationTimestamp": "2026-01-01T00:00:00Z"}}


def _spread_snapshot(tmp_path: Path) -> Path:
    """Zones z0 and z1 hold web pods and one db pod per node (high priority on even nodes, low on odd ones)
    beside a low-priority filler; z2 is full (a high-priority pod, a low-priority filler: too small to
    make room on even nodes). Pending: web pods spread over zones
    (PodTopologySpread rejects z0/z1, removing victims never helps) and pods avoiding db pods per host
    (InterPodAffinity rejects every node; removing a low-priority db pod helps). Every fourth node of z0/z1
    also holds a low-priority pod whose required anti-affinity counts web pods."""
    items: list[dict] = []
    for i in range(24):
        n, zone = f"n{i:02}", f"z{i // 8}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {
            "kubernetes.io/hostname": n, "topology.kubernetes.io/zone": zone}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        if zone == "z2":
            big = i % 2 == 0  # too big to make room for anyone by removing the filler
            items.append(_pod_doc(f"full-{i}", 2000, "3900m" if big else "3", {"app": "other"}, n))
            items.append(_pod_doc(f"filler-{i}", 1, "100m" if big else "1", {}, n))
            continue
        items.append(_pod_doc(f"web-{i}", 1 if i % 4 == 0 else 1000, "1", {"app": "web"}, n))
        items.append(_pod_doc(f"db-{i}", 1000 if i % 2 == 0 else 1, "1", {"app": "db"}, n))
        items.append(_pod_doc(f"filler-{i}", 1, "1", {}, n))
        if i % 4 == 1:  # a low-priority pod whose own anti-affinity counts the web pods (no terms of theirs)
            items.append(_pod_doc(f"guard-{i}", 1, "0", {"app": "guard"}, n, affinity={"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}))
    spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    for k in range(6):
        items.append(_pod_doc(f"spread-{k}", 500, "500m", {"app": "web"}, topologySpreadConstraints=spread))
        items.append(_pod_doc(f"avoid-{k}", 600, "500m", {"app": "b"}, affinity=anti))
    # higher than the db and web pods of priority 1000: other victims on the same nodes
    items.append(_pod_doc("avoid-high", 1500, "500m", {"app": "b"}, affinity=anti))
    return _list_file(tmp_path / "spread.json", items)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "reference"])
def test_tail_dry_runs_give_the_full_dry_runs_statuses(batched: bool, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A node rejected by PodTopologySpread or InterPodAffinity keeps that status when its victims change
    no PreFilter state, else is dry-run with only RemovePod and those plugins' Filter: the same statuses
    and candidates per node, the same --trace JSON, as the full dry run (copied node and state, every
    Filter plugin) on every node."""
    path = _spread_snapshot(tmp_path)
    taken: Counter[str] = Counter()
    real, real_changes = dp.DefaultPreemption._judge_from, dp.DefaultPreemption._victims_change_state

    def spy(self: dp.DefaultPreemption, *args: Any) -> Any:
        pod, node, victims = args[1], args[2], args[8]
        assert victims == [p for p in node.pods if p.priority < pod.priority]  # the kept lists are current
        st = real(self, *args)
        split, at = args[3], args[4]
        taken[("head" if at < split.head else "tail") + (" rejected" if st is not None else " passed")] += 1
        return st

    def spy_changes(*args: Any) -> bool:
        changes = real_changes(*args)
        taken["state changed" if changes else "state unchanged"] += 1
        return changes

    runs, _ = _split_then_full(path, batched, monkeypatch, {
        "_judge_from": spy, "_victims_change_state": staticmethod(spy_changes)})
    assert runs[0][1] == runs[1][1]
    assert runs[0][0] == runs[1][0]
    assert all(taken[k] >= 5 for k in ("tail rejected", "tail passed", "head rejected", "head passed",
                                       "state changed", "state unchanged")), taken


def _kept_snapshot(tmp_path: Path) -> Path:
    """Six nodes, each with a low-priority filler no PreFilter state counts: a pod of app db on n0/n1 (the
    pending pod's anti-affinity rejects them), a pod whose anti-affinity counts the pending pod on n2/n3
    (existing anti-affinity rejects them), a pod that fills n4/n5 even without the filler."""
    def anti(app: str) -> dict:
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": app}}}]}}

    items: list[dict] = []
    for i in range(6):
        n = f"n{i}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {
            "kubernetes.io/hostname": n}}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        items.append(_pod_doc(f"filler-{i}", 1, "1", {}, n))
        if i < 2:
            items.append(_pod_doc(f"db-{i}", 1000, "1", {"app": "db"}, n))
        elif i < 4:
            items.append(_pod_doc(f"guard-{i}", 1000, "1", {"app": "guard"}, n, affinity=anti("b")))
        else:
            items.append(_pod_doc(f"big-{i}", 1000, "3", {"app": "big"}, n))
    items.append(_pod_doc("avoid", 600, "1500m", {"app": "b"}, affinity=anti("db")))
    items.append(_pod_doc("small", 100, "100m", {"app": "small"}))  # bound between avoid's two preemptions
    return _list_file(tmp_path / "kept.json", items)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "reference"])
def test_nodes_keep_their_own_filter_status(batched: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tail-rejected nodes whose victims change nothing keep their own Filter status (two InterPodAffinity
    reasons in one preemption), as the full dry run gives them; in pass 2 the node a pod was bound to in
    between has that pod among its victims (the per-node lists kept across preemptions follow the node)."""
    path = _kept_snapshot(tmp_path)
    real = dp.DefaultPreemption._judge_from
    judged: list[tuple[str, list[str]]] = []

    def spy(self: dp.DefaultPreemption, *args: Any) -> Any:
        pod, node, victims = args[1], args[2], args[8]
        assert victims == [p for p in node.pods if p.priority < pod.priority]
        judged.append((node.name, [v.name for v in victims]))
        return real(self, *args)

    runs, _ = _split_then_full(path, batched, monkeypatch, {"_judge_from": spy})
    assert runs[0] == runs[1]
    assert any("small" in victims for _, victims in judged), judged
    first, second = runs[0][1]
    assert first[2:] == second[2:]
    _, _, potential, candidates, statuses = second
    assert potential == [f"n{i}" for i in range(6)] and candidates == []
    assert {n: st[2] for n, st in statuses.items()} == {
        "n0": [ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH], "n1": [ipa.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH],
        "n2": [ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH],
        "n3": [ipa.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH],
        "n4": ["Insufficient cpu"], "n5": ["Insufficient cpu"]}


def _nominated_snapshot(tmp_path: Path) -> Path:
    """Ten nodes of 1 CPU, each full of three low-priority pods of 300m; pending: pods of 500m and 600m of
    one priority, so each preemption nominates a pod and later ones meet nodes with nominated pods and a
    filler left (a 500m pod fits beside a nominated 500m one once the filler goes, a 600m pod never does)."""
    items: list[dict] = []
    for i in range(10):
        n = f"n{i}"
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {
            "kubernetes.io/hostname": n}}, "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}})
        items.extend(_pod_doc(f"low-{i}-{k}", 1, "300m", {}, n) for k in range(3))
    items.extend(_pod_doc(f"p{k}", 100, "600m" if k % 2 else "500m", {}) for k in range(14))
    return _list_file(tmp_path / "nominated.json", items)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "reference"])
def test_nodes_with_nominated_pods_are_judged_with_them(batched: bool, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A Filter-rejected node holding pods nominated to it (of the preemptor's priority) is judged from the
    rejecting plugin on with those pods added to it without its victims, when no PreFilter state counts
    pods: the same statuses, candidates and --trace JSON as the full dry run on every node."""
    path = _nominated_snapshot(tmp_path)
    taken: Counter[str] = Counter()
    real = dp.DefaultPreemption._judge_from

    def spy(self: dp.DefaultPreemption, *args: Any) -> Any:
        pod, node, nominated = args[1], args[2], args[9]
        assert nominated == [p for p in self.handle.snapshot.nominated_pods_for(node.name)
                             if p.priority >= pod.priority and p.uid != pod.uid]
        st = real(self, *args)
        taken[("with nominated" if nominated else "without") + (" rejected" if st is not None else " passed")] += 1
        return st

    runs, result = _split_then_full(path, batched, monkeypatch, {"_judge_from": spy})
    assert runs[0][1] == runs[1][1]
    assert runs[0][0] == runs[1][0]
    assert taken["with nominated rejected"] >= 5 and taken["with nominated passed"] >= 1, taken
    assert sum(1 for c in result.cycles if c.outcome == "Nominated") >= 10


def _counts(state: Any) -> tuple:
    """What RemovePod can change: PodTopologySpread's maps and critical paths, InterPodAffinity's maps."""
    s, a = state.read(pts.PRE_FILTER_STATE_KEY), state.read(ipa.PRE_FILTER_STATE_KEY)
    spread = None if s is None else ([dict(m) for m in s.tp_value_to_match_num],
                                     [(p.v0, p.n0, p.v1, p.n1) for p in s.critical_paths])
    affinity = None if a is None else (dict(a.existing_anti_affinity_counts), dict(a.affinity_counts),
                                       dict(a.anti_affinity_counts))
    return spread, affinity


@pytest.mark.parametrize("cluster", ["spread", "all"])
def test_remove_pod_changes_says_whether_remove_pod_changes_the_state(cluster: str, tmp_path: Path) -> None:
    """Every (pending pod, running pod of lower priority) pair: the topology plugins' ``remove_pod_changes``
    is True exactly when their RemovePod changes a count; per node, the ``removal_check`` a preemption
    builds once says whether any of the node's victims (all, each alone, none) would."""
    path = _spread_snapshot(tmp_path) if cluster == "spread" else _write(tmp_path, 40, 40, 300, 3)
    sim = Simulation(load_snapshot([str(path)]), CONFIG, REGISTRY, SimulationOptions())
    fwk = next(iter(sim.frameworks.values()))
    seen: Counter[tuple[str, bool]] = Counter()
    for pod in sim.cluster.pods:
        if pod.node_name:
            continue
        state = CycleState()
        fwk.run_pre_filter(state, pod, sim.state.node_infos)
        before = _counts(state)
        plugins = [p for p in fwk.pre_filter_with_extensions
                   if p.name not in state.skip_filter_plugins and p.name in dp.NODE_OBJECT_ONLY]
        checks = {p.name: p.removal_check(state, pod) for p in plugins}
        for ni in sim.state.node_infos:
            victims = [v for v in ni.pods if v.priority < pod.priority]
            for plugin in plugins:
                check = checks[plugin.name]
                said_each = []
                for victim in victims:
                    said = plugin.remove_pod_changes(state, pod, victim, ni)
                    trial = state.clone()
                    plugin.remove_pod(trial, pod, victim, ni)
                    assert said == (_counts(trial) != before), (plugin.name, pod.key, victim.key, ni.name)
                    seen[(plugin.name, said)] += 1
                    said_each.append(said)
                    assert (check is not None and check([victim], ni)) == said, (plugin.name, pod.key, victim.key)
                assert (check is not None and check(victims, ni)) == any(said_each), (plugin.name, pod.key, ni.name)
                assert check is None or not check([], ni)
                seen[(plugin.name + " check", any(said_each))] += 1
            whole = any(plugin.remove_pod_changes(state, pod, v, ni) for plugin in plugins for v in victims)
            assert dp.DefaultPreemption._victims_change_state(fwk.removal_checks(state, pod), victims, ni) == whole
    assert all(seen[(name, said)] for name in dp.NODE_OBJECT_ONLY for said in (True, False)), seen
    assert all(seen[(name + " check", said)] for name in dp.NODE_OBJECT_ONLY for said in (True, False)), seen
