"""The fast path (node columns, cached shape masks, vectorised Filter and Score) decides exactly as the
per-node reference path: same JSON, byte for byte, on clusters large enough for the fast path to run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler import fastfilter
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.builders import load_bench, topology_cluster

bench = load_bench()

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


# ------------------------------------------------------------------ the topology plugins' array forms, directly

def _status_key(st: object) -> object:
    if st is None:
        return None
    return (int(st.code), list(st.reasons))  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_topology_plugins_array_forms_equal_their_per_node_methods(seed: int, tmp_path: Path) -> None:
    """For every pending pod, in turn bound to its best node so that counts move: PodTopologySpread's and
    InterPodAffinity's ``batch_filter`` (verdict and every rejected row's Status), ``batch_score`` and
    ``batch_normalize`` equal ``filter``, ``score`` and ``normalize_score`` node by node."""
    import numpy as np

    from pysched.framework.cycle_state import CycleState
    from pysched.framework.interface import NodeScore
    from pysched.framework.status import Code
    from pysched.plugins.interpodaffinity import InterPodAffinity
    from pysched.plugins.podtopologyspread import PodTopologySpread
    from pysched.snapshot.columns import ROWS_KEY, columns_for

    path = tmp_path / "c.json"
    path.write_text(json.dumps(topology_cluster(seed, 70, 120, 40)))
    reg = in_tree_registry()
    sim = Simulation(load_snapshot([str(path)]), load_config(None, reg), reg, SimulationOptions())
    fwk = sim.frameworks["default-scheduler"]
    cluster = sim.state
    plugins = [p for p in fwk.filter if isinstance(p, PodTopologySpread | InterPodAffinity)]
    assert len(plugins) == 2
    pending = [p for p in sim.cluster.pods if not p.node_name]
    checked = {"filter": 0, "rejected": 0, "score": 0}
    for pod in pending:
        state = CycleState()
        _, st, _ = fwk.run_pre_filter(state, pod, cluster.node_infos)
        if st is not None and st.code != Code.Success:
            continue
        cols = columns_for(cluster)
        ok_all = np.ones(cols.n, dtype=bool)
        for p in plugins:
            if p.name in state.skip_filter_plugins:
                continue
            v = p.batch_filter(state, pod, cols)
            assert v is not None
            want = [p.filter(state, pod, ni) for ni in cols.infos]
            assert v.ok.tolist() == [w is None for w in want], p.name
            bad = np.flatnonzero(~v.ok)
            got = v.statuses(bad)
            assert [_status_key(s) for s in got] == [_status_key(want[i]) for i in bad.tolist()], p.name
            checked["filter"] += 1
            checked["rejected"] += len(bad)
            ok_all &= v.ok
        rows = np.flatnonzero(ok_all)
        if len(rows) < 2:
            continue
        feasible = [cols.infos[i] for i in rows.tolist()]
        state.write(ROWS_KEY, (feasible, rows, cols))
        fwk.run_pre_score(state, pod, feasible)
        best = None
        for p in plugins:
            if p.name in state.skip_score_plugins:
                continue
            raw = p.batch_score(state, pod, cols, rows)
            assert raw is not None
            want_raw = [p.score(state, pod, ni)[0] for ni in feasible]
            assert raw.tolist() == want_raw, p.name
            scores = [NodeScore(ni.name, v) for ni, v in zip(feasible, want_raw, strict=True)]
            p.normalize_score(state, pod, scores)
            assert p.batch_normalize(state, pod, raw).tolist() == [s.score for s in scores], p.name
            checked["score"] += 1
            best = feasible[int(np.argmax(raw))]
        cluster.bind(pod, (best or feasible[0]).name)
    assert checked["filter"] > 20 and checked["rejected"] > 0 and checked["score"] > 10, checked


_NODE_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


@pytest.mark.parametrize("seed", range(3))
def test_required_affinity_mask_equals_the_per_node_match(seed: int) -> None:
    """The array form of nodeSelector + required node affinity (one evaluation per distinct label value)
    agrees with ``pod_matches_node_selector_and_affinity`` on every node, for every operator, missing
    labels, non-numeric values under Gt/Lt and matchFields."""
    import random

    from pysched.model.objects import parse_node, parse_pod
    from pysched.plugins.helper import pod_matches_node_selector_and_affinity
    from pysched.plugins.topology_arrays import topology_arrays
    from pysched.snapshot.cluster import Cluster, ClusterState
    from pysched.snapshot.columns import columns_for

    rng = random.Random(seed)
    words = ["1", "2", "5", "10", "x", ""]
    nodes = []
    for i in range(80):
        labels = {k: rng.choice(words) for k in ("a", "b", "c") if rng.random() < 0.7}
        nodes.append(parse_node({"metadata": {"name": f"n{i}", "labels": labels},
                                 "status": {"allocatable": {"cpu": "1", "pods": "10"}}}))
    topo = topology_arrays(columns_for(ClusterState(Cluster(nodes=nodes))))
    infos = topo.cols.infos
    for k in range(60):
        spec: dict = {"containers": [{"name": "c", "image": "i"}]}
        if rng.random() < 0.4:
            spec["nodeSelector"] = {rng.choice("abc"): rng.choice(words[:5])}
        if rng.random() < 0.8:
            terms = []
            for _ in range(rng.randint(1, 3)):
                term: dict = {}
                exprs = []
                for _ in range(rng.randint(0, 3)):
                    op = rng.choice(_NODE_OPS)
                    r: dict = {"key": rng.choice("abc"), "operator": op}
                    if op in ("In", "NotIn"):
                        r["values"] = rng.sample(words[:5], rng.randint(1, 2))
                    elif op in ("Gt", "Lt"):
                        r["values"] = [rng.choice(["1", "5", "x"])]
                    exprs.append(r)
                if exprs:
                    term["matchExpressions"] = exprs
                if rng.random() < 0.2:
                    term["matchFields"] = [{"key": "metadata.name", "operator": rng.choice(["In", "NotIn"]),
                                            "values": [f"n{rng.randrange(80)}"]}]
                terms.append(term)
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": terms}}}
        pod = parse_pod({"metadata": {"name": f"p{k}", "namespace": "default"}, "spec": spec})
        want = [pod_matches_node_selector_and_affinity(pod, ni.node.labels, ni.name) for ni in infos]
        assert topo.required_affinity_mask(pod).tolist() == want, spec


@pytest.mark.parametrize("seed", range(2))
def test_tolerated_mask_equals_find_untolerated_taint(seed: int) -> None:
    """Taints grouped by node (one evaluation per distinct taint list) agree with the per-node check,
    for every effect and toleration operator."""
    import random

    from pysched.model.objects import parse_node, parse_pod
    from pysched.plugins.helper import find_untolerated_taint
    from pysched.plugins.topology_arrays import topology_arrays
    from pysched.snapshot.cluster import Cluster, ClusterState
    from pysched.snapshot.columns import columns_for

    rng = random.Random(seed)
    effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
    nodes = []
    for i in range(70):
        taints = [{"key": rng.choice("kl"), "value": rng.choice(["1", "2"]), "effect": rng.choice(effects)}
                  for _ in range(rng.choice([0, 0, 1, 2]))]
        nodes.append(parse_node({"metadata": {"name": f"n{i}"}, "spec": {"taints": taints},
                                 "status": {"allocatable": {"cpu": "1", "pods": "10"}}}))
    topo = topology_arrays(columns_for(ClusterState(Cluster(nodes=nodes))))
    for k in range(40):
        tols = []
        for _ in range(rng.randint(0, 2)):
            t: dict = {"key": rng.choice(["k", "l", ""]), "operator": rng.choice(["Equal", "Exists"])}
            if t["operator"] == "Equal":
                t["value"] = rng.choice(["1", "2"])
            if not t["key"]:
                t["operator"] = "Exists"
            if rng.random() < 0.5:
                t["effect"] = rng.choice(effects)
            tols.append(t)
        pod = parse_pod({"metadata": {"name": f"p{k}", "namespace": "default"},
                         "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": tols}})
        want = [find_untolerated_taint(ni.node.taints, pod.tolerations) is None for ni in topo.cols.infos]
        assert topo.tolerated_mask(pod.tolerations).tolist() == want, tols
