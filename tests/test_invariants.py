"""Properties of any simulation: a bound pod passed every filter on its node; normalized scores stay
within [0, 100]; the JSON is deterministic; NodeInfo totals equal the sum over the pods placed."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.framework.config import load_config
from pysched.model.resources import Resource
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import Document, build_cluster

REGISTRY = in_tree_registry()
CONFIG = load_config(None, REGISTRY)
ZONES = ["a", "b", "c"]


@st.composite
def clusters(draw: st.DrawFn) -> list[dict]:
    objs: list[dict] = []
    n_nodes = draw(st.integers(1, 5))
    for i in range(n_nodes):
        taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if draw(st.booleans()) and i else []
        objs.append({"apiVersion": "v1", "kind": "Node",
                     "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}",
                                                             "topology.kubernetes.io/zone": draw(st.sampled_from(ZONES)),
                                                             "disk": draw(st.sampled_from(["ssd", "hdd"]))}},
                     "spec": {"taints": taints, "unschedulable": draw(st.booleans()) and i > 0},
                     "status": {"allocatable": {"cpu": draw(st.sampled_from(["1", "2", "4"])),
                                                "memory": draw(st.sampled_from(["1Gi", "4Gi"])), "pods": "5"},
                                "images": [{"names": ["img:1"], "sizeBytes": 300_000_000}] if i % 2 else []}})
    for j in range(draw(st.integers(1, 8))):
        spec: dict = {"containers": [{"name": "c", "image": draw(st.sampled_from(["img:1", "img:2"])),
                                      "resources": {"requests": {
                                          "cpu": draw(st.sampled_from(["0", "100m", "500m", "1", "3"])),
                                          "memory": draw(st.sampled_from(["0", "128Mi", "1Gi"]))}}}],
                      "priority": draw(st.sampled_from([0, 10, 1000]))}
        if draw(st.booleans()):
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if draw(st.booleans()):
            spec["nodeSelector"] = {"disk": "ssd"}
        if draw(st.booleans()):
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": draw(st.sampled_from(
                                                      ["DoNotSchedule", "ScheduleAnyway"])),
                                                  "labelSelector": {"matchLabels": {"app": "x"}}}]
        if draw(st.booleans()):
            spec["affinity"] = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                   "labelSelector": {"matchLabels": {"app": "x"}}}}]}}
        if draw(st.booleans()) and n_nodes:
            spec["nodeName"] = f"n{draw(st.integers(0, n_nodes - 1))}"
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"p{j}", "namespace": "ns", "labels": {"app": "x"},
                                  "creationTimestamp": f"2026-01-01T00:00:{j:02d}Z"},
                     "spec": spec, "status": {"phase": "Running" if "nodeName" in spec else "Pending"}})
    return objs


def simulate(objs: list[dict]) -> tuple[dict, Simulation]:
    cluster = build_cluster([(Document("gen", i + 1, o), o, "") for i, o in enumerate(objs)])
    sim = Simulation(cluster, CONFIG, REGISTRY, SimulationOptions(trace=True))
    return sim.run().to_dict(), sim


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_simulation_invariants(objs: list[dict]) -> None:
    data, sim = simulate(objs)
    weights = sim.frameworks["default-scheduler"].score_weights
    for c in data["cycles"]:
        if c["outcome"] == "Scheduled" and "filter_all" in c:
            verdicts = c["filter_all"][c["node"]]
            assert all(v["code"] in ("Success", "Skip") for v in verdicts.values()), c
        for node, sc in (c.get("scores") or {}).items():
            assert sc["total"] == sum(sc["plugins"].values())
            for plugin, value in sc["plugins"].items():
                assert 0 <= value <= 100 * weights[plugin], (node, plugin, value)
    # the running totals equal the sum over the pods now on each node
    for ni in sim.state.node_infos:
        total = Resource()
        for p in ni.pods:
            total.add(p.requests)
        assert (ni.requested.milli_cpu, ni.requested.memory) == (total.milli_cpu, total.memory)
    # same input, same options: byte-identical JSON
    again, _ = simulate(json.loads(json.dumps(objs)))
    assert to_json(again) == to_json(data)
