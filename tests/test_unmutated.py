"""A simulation never changes the loaded cluster (upstream schedules copies of pods, never the informer's
objects): one loaded snapshot gives the same results however often it is simulated, on either path."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler.explain import explain_pod
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot

CONFORMANCE = Path(__file__).resolve().parent / "conformance"
# preemption with nominations (and a nominated pod's fast path), a mix of every plugin, volumes bound
# and provisioned, devices allocated
CASES = ["scenarios/080-preemption", "scenarios/102-edge-preemption", "scenarios/011-mixed", "volumes/001-volumes",
         "dra/001-dra", "dra/020-dra"]


def fingerprint(o: Any) -> Any:
    """Everything reachable from ``o`` as plain tuples (dataclass and slotted fields, dicts, lists, sets),
    so that two object graphs compare by value even where a class compares by identity."""
    if isinstance(o, (str, int, float, bool, type(None))):
        return o
    if isinstance(o, dict):
        return tuple(sorted((repr(k), fingerprint(v)) for k, v in o.items()))
    if isinstance(o, (list, tuple)):
        return tuple(fingerprint(v) for v in o)
    if isinstance(o, (set, frozenset)):
        return tuple(sorted(repr(fingerprint(v)) for v in o))
    if dataclasses.is_dataclass(o):
        return (type(o).__name__, *((f.name, fingerprint(getattr(o, f.name))) for f in dataclasses.fields(o)))
    slots = [s for k in type(o).__mro__ for s in getattr(k, "__slots__", ())]
    if slots:
        return (type(o).__name__, *((s, fingerprint(getattr(o, s, None))) for s in slots))
    if hasattr(o, "__dict__"):
        return (type(o).__name__, *((k, fingerprint(v)) for k, v in sorted(vars(o).items())))
    return repr(o)


def _snapshot(case: str) -> Path:
    yaml = CONFORMANCE / f"{case}.yaml"
    return yaml if yaml.exists() else CONFORMANCE / f"{case}.yaml.gz"


def _run(cluster, batched: bool = True) -> str:
    registry = in_tree_registry()
    opts = SimulationOptions(tie_break="name", trace=True, batched=batched)
    return to_json(Simulation(cluster, load_config(None, registry), registry, opts).run().to_dict())


@pytest.mark.parametrize("case", CASES)
def test_one_loaded_cluster_simulates_many_times(case: str) -> None:
    cluster = load_snapshot([str(_snapshot(case))])
    before = fingerprint(cluster)
    first = _run(cluster)
    assert json.loads(first)["cycles"], "the scenario schedules something"
    assert _run(cluster, batched=False) == first
    assert _run(cluster) == first
    assert fingerprint(cluster) == before, "a simulation changed the loaded cluster"
    assert _run(load_snapshot([str(_snapshot(case))])) == first


def test_bound_and_nominated_pods_stay_pending_in_the_input() -> None:
    cluster = load_snapshot([str(_snapshot("scenarios/080-preemption"))])
    pending = {p.key for p in cluster.pods if not p.node_name}
    registry = in_tree_registry()
    sim = Simulation(cluster, load_config(None, registry), registry, SimulationOptions(tie_break="name"))
    result = sim.run()
    outcomes = {c.outcome for c in result.cycles}
    assert {"Nominated", "Scheduled"} <= outcomes
    assert {p.key for p in cluster.pods if not p.node_name} == pending
    assert all(not p.nominated_node_name for p in cluster.pods if p.key in pending)
    # the simulation's own view has them
    for key, node in result.bindings.items():
        pod = next(p for p in cluster.pods if p.key == key)
        assert sim.state.node_name_of(pod) == node


def test_explain_twice_on_one_cluster() -> None:
    cluster = load_snapshot([str(_snapshot("scenarios/080-preemption"))])
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    target = next(p.key for p in reversed(cluster.pods) if not p.node_name)
    a = explain_pod(cluster, cfg, registry, target, SimulationOptions(tie_break="name"))
    b = explain_pod(cluster, cfg, registry, target, SimulationOptions(tie_break="name"))
    assert [c.to_dict(True) for c in a.cycles] == [c.to_dict(True) for c in b.cycles]
    assert a.cycles


# the path of `pysched simulate`: the loaded cluster expanded (edits, workloads) and then simulated; the pending
# pods of the input are the expanded cluster's own objects (not copies), so neither may change
EXPANDED = [("scenarios/080-preemption", None), ("scenarios/011-mixed", None),
            ("workloads/000-workloads", "workloads/000-workloads.scenario.yaml"),
            ("workloads/009-workloads", "workloads/009-workloads.scenario.yaml")]


@pytest.mark.parametrize(("case", "scenario"), EXPANDED, ids=[c for c, _ in EXPANDED])
def test_expanded_cluster_simulates_many_times(case: str, scenario: str | None) -> None:
    from pysched.controllers import expand_cluster, parse_scenario

    loaded = load_snapshot([str(_snapshot(case))])
    before = fingerprint(loaded)
    edits = parse_scenario(str(CONFORMANCE / scenario)).edits if scenario else []
    expanded = expand_cluster(loaded, edits)
    pending = [p for p in loaded.pods if not p.node_name]
    assert pending, "the input has pending pods"
    shared = {id(p) for p in expanded.pods}
    assert all(id(p) in shared for p in pending), "the input's pending pods are the expanded cluster's"
    expanded_before = fingerprint(expanded)
    first = _run(expanded)
    assert json.loads(first)["cycles"], "the scenario schedules something"
    assert _run(expanded, batched=False) == first
    assert _run(expand_cluster(loaded, edits)) == first
    assert fingerprint(expanded) == expanded_before, "a simulation changed the expanded cluster"
    assert fingerprint(loaded) == before, "expanding or simulating changed the loaded cluster"
