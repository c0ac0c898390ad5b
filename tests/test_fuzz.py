"""Fuzzing the input edge: random text and mutated objects and configs may succeed or be an ``InputError``
(exit code 2); any other exception is a bug (issue 7).

Bounded: about 200 examples per test, no deadline; the module runs in well under 20 seconds.
"""

from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.errors import PyschedError
from pysched.framework.config import build_config, load_config
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.builders import key_paths

REGISTRY = in_tree_registry()
DEFAULT_CONFIG = load_config(None, REGISTRY)
# PYSCHED_FUZZ_EXAMPLES=5000 PYSCHED_FUZZ_RANDOM=1 for a longer, randomised hunt
FUZZ = settings(max_examples=int(os.environ.get("PYSCHED_FUZZ_EXAMPLES", "200")), deadline=None,
                derandomize=not os.environ.get("PYSCHED_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TMP = Path(tempfile.mkdtemp(prefix="pysched-fuzz-"))
atexit.register(shutil.rmtree, TMP, ignore_errors=True)

# --------------------------------------------------------------------------- valid seeds

NODE: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "node-1", "labels": {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a",
                                             "disk": "ssd"}},
    "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}], "unschedulable": False},
    "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": "1"},
               "images": [{"names": ["nginx:1"], "sizeBytes": 1000000}]},
}
RUNNING: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "db-0", "namespace": "team-a", "labels": {"app": "db"},
                 "creationTimestamp": "2025-03-01T08:00:00Z",
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u1",
                                      "controller": True}]},
    "spec": {"nodeName": "node-1", "priority": 5,
             "containers": [{"name": "db", "image": "postgres", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                             "ports": [{"containerPort": 5432, "hostPort": 5432}]}]},
    "status": {"phase": "Running", "startTime": "2025-03-01T08:00:05Z",
               "conditions": [{"type": "Ready", "status": "True"}]},
}
PENDING: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "namespace": "team-a", "labels": {"app": "web"},
                 "creationTimestamp": "2025-03-01T08:01:00Z"},
    "spec": {
        "priorityClassName": "high",
        "schedulerName": "default-scheduler",
        "nodeSelector": {"disk": "ssd"},
        "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always",
                            "resources": {"requests": {"cpu": "100m"}}}],
        "containers": [{"name": "web", "image": "nginx:1",
                        "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                        "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]}],
        "overhead": {"cpu": "10m"},
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "PreferNoSchedule"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}]},
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                  "labelSelector": {"matchLabels": {"app": "db"}}}}]},
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "namespaces": ["team-a"],
                 "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}}]},
        },
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "ScheduleAnyway", "nodeAffinityPolicy": "Honor",
                                       "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["app"]}],
    },
}
OTHERS: list[dict[str, Any]] = [
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000,
     "preemptionPolicy": "PreemptLowerPriority"},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db", "namespace": "team-a"},
     "spec": {"selector": {"matchLabels": {"app": "db"}}}, "status": {"disruptionsAllowed": 0}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"env": "prod"}}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "team-a"},
     "spec": {"selector": {"matchLabels": {"app": "db"}}}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "team-a"},
     "spec": {"selector": {"app": "web"}}},
]
SEEDS = [NODE, RUNNING, PENDING, *OTHERS]

CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 50,
    "profiles": [
        {"schedulerName": "default-scheduler",
         "plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 2}],
                               "disabled": [{"name": "ImageLocality"}]},
                     "multiPoint": {"enabled": [{"name": "TaintToleration", "weight": 3}]}},
         "pluginConfig": [
             {"name": "NodeResourcesFit", "args": {"scoringStrategy": {
                 "type": "RequestedToCapacityRatio",
                 "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                 "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                        {"utilization": 100, "score": 10}]}}}},
             {"name": "PodTopologySpread", "args": {"defaultingType": "List", "defaultConstraints": [
                 {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                  "whenUnsatisfiable": "ScheduleAnyway"}]}},
             {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
             {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                 "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "Exists"}]}]}}}},
             {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 10,
                                                    "minCandidateNodesAbsolute": 100}},
         ]},
        {"schedulerName": "batch", "percentageOfNodesToScore": 0,
         "plugins": {"filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]}}},
    ],
}

# --------------------------------------------------------------------------- mutations

ODD = st.sampled_from([
    None, 0, -1, 1, 2**63, 1.5, float("inf"), float("nan"), True, False, "", "x", "2x", "-5", "-1Gi", "In", "Exists",
    "*", "Gt", "NoSchedule", "a/b/c", "tier!", " ", "1e400", "9" * 300, "2025-13-45", [], {}, [None], ["x"], [{}],
    {"a": 1}, {"": ""}, {"key": "a", "operator": "In", "values": ["x"]}, [[[]]], {"matchLabels": {"a": "b"}},
])
VALUES = st.recursive(ODD | st.text(max_size=8) | st.integers(), lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6).map(copy.deepcopy)




_PLAIN = {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name")}  # the corpus covers these


def _mutate(obj: Any, data: st.DataObject) -> Any:
    obj = copy.deepcopy(obj)
    rnd = data.draw(st.randoms(use_true_random=False), label="random")
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        paths = [p for p in key_paths(obj) if p and p not in _PLAIN]
        if not paths:
            break
        path = rnd.choice(paths)  # uniform: hypothesis' own choices favour the first paths
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        how = data.draw(st.sampled_from(["replace", "delete", "add"]), label="how")
        if how == "delete":
            del parent[last]
        elif how == "add" and isinstance(parent[last], dict):
            parent[last][data.draw(st.text(max_size=12), label="key")] = data.draw(VALUES, label="value")
        elif how == "add" and isinstance(parent[last], list):
            parent[last].append(data.draw(VALUES, label="value"))
        else:
            parent[last] = data.draw(VALUES, label="value")
    return obj


def _dump(docs: list, as_json: bool) -> str:
    if as_json:
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, allow_nan=True)
    return yaml.safe_dump_all(docs, allow_unicode=True)


def _run_snapshot(text: str | bytes, suffix: str = ".yaml") -> None:
    path = TMP / f"snap{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    try:
        cluster = load_snapshot([str(path)])
    except PyschedError as e:
        assert e.exit_code == 2, e
        return
    try:
        Simulation(cluster, DEFAULT_CONFIG, REGISTRY, SimulationOptions()).run().to_dict()
    except PyschedError as e:
        assert e.exit_code == 2, e


# --------------------------------------------------------------------------- (a) the loader

YAMLISH = st.lists(st.sampled_from([
    "apiVersion: v1\n", "kind: Pod\n", "kind: Node\n", "kind: List\n", "items:\n", "metadata:\n", "  name: a\n",
    "  namespace: b\n", "spec:\n", "  containers:\n", "  - name: c\n", "    resources: {requests: {cpu: 2x}}\n",
    "---\n", "- ", "[", "]", "{", "}", ",", ": ", "&a ", "*a ", "*b ", "&b [*a, *a]\n", "!!binary ", "!!set ",
    "!!python/object:os.system ", "? ", "|\n", ">\n", "'", '"', "\t", "\n", "  ", "#", "%YAML 1.1\n", "...\n",
    "2025-13-45", "1e999", ".nan", "<<: *a\n", "null", "~", "\x00", "\ufeff", "é", "\\u0000", "9" * 5000,
    "profiles:\n", "- schedulerName: x\n", "  pluginConfig:\n", "  - name: NodeResourcesFit\n", "    args: ",
]), max_size=40).map("".join)


@FUZZ
@given(YAMLISH)
def test_yamlish_text(text: str) -> None:
    _run_snapshot(text)


@FUZZ
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    _run_snapshot(text, ".json" if text.lstrip().startswith("{") else ".yaml")


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    _run_snapshot(data)


@FUZZ
@given(st.data(), st.booleans())
def test_mutated_objects(data: st.DataObject, as_json: bool) -> None:
    docs = copy.deepcopy(SEEDS)
    i = data.draw(st.sampled_from([2, 2, 2, 1, 0, 0, 3, 4, 5, 6, 7]), label="object")  # mostly the pending pod
    docs[i] = _mutate(docs[i], data)
    _run_snapshot(_dump(docs, as_json), ".json" if as_json else ".yaml")


def test_seeds_are_valid() -> None:
    path = TMP / "seeds.yaml"
    path.write_text(_dump(SEEDS, False))
    cluster = load_snapshot([str(path)])
    result = Simulation(cluster, DEFAULT_CONFIG, REGISTRY, SimulationOptions()).run()
    assert len(result.cycles) >= 1
    assert build_config(CONFIG, REGISTRY).profiles


# --------------------------------------------------------------------------- (b) the config decoder

@FUZZ
@given(st.data())
def test_mutated_config(data: st.DataObject) -> None:
    raw = _mutate(CONFIG, data)
    try:
        build_config(raw, REGISTRY)
    except PyschedError as e:
        assert e.exit_code == 2, e


@FUZZ
@given(YAMLISH)
def test_yamlish_config_text(text: str) -> None:
    path = TMP / "config-text.yaml"
    path.write_bytes(("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + text)
                     .encode("utf-8", "surrogatepass"))
    try:
        load_config(str(path), REGISTRY)
    except PyschedError as e:
        assert e.exit_code == 2, e


@FUZZ
@given(st.data())
def test_mutated_config_file(data: st.DataObject) -> None:
    raw = _mutate(CONFIG, data)
    path = TMP / "config.yaml"
    path.write_text(yaml.safe_dump(raw) if data.draw(st.booleans(), label="yaml") else json.dumps(raw))
    try:
        load_config(str(path), REGISTRY)
    except PyschedError as e:
        assert e.exit_code == 2, e


# --------------------------------------------------------------------------- (c) the bounded reader (issue 17)

@FUZZ
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=400), st.binary(max_size=8))
def test_damaged_gzip(payload: bytes, cut: int, tail: bytes) -> None:
    import gzip as _gzip

    data = _gzip.compress(b"apiVersion: v1\nkind: Node\nmetadata: {name: n}\n" + payload)
    _run_snapshot(data[:cut] + tail if cut < len(data) else data + tail, ".yaml.gz")


@FUZZ
@given(YAMLISH)
def test_yamlish_kubeconfig(text: str) -> None:
    from pysched.snapshot.live import resolve_source

    path = TMP / "kubeconfig"
    path.write_bytes(("apiVersion: v1\nkind: Config\n" + text).encode("utf-8", "surrogatepass"))
    try:
        resolve_source(kubeconfig=str(path), environ={})
    except PyschedError as e:
        assert e.exit_code == 2, e


@FUZZ
@given(st.data(), st.sampled_from(["strict", "warn", "ignore"]))
def test_mutated_objects_under_every_validation_mode(data: st.DataObject, mode: str) -> None:
    docs = copy.deepcopy(SEEDS)
    i = data.draw(st.sampled_from([2, 1, 0, 3, 4]), label="object")
    docs[i] = _mutate(docs[i], data)
    path = TMP / "validate.yaml"
    path.write_text(_dump(docs, False))
    try:
        cluster = load_snapshot([str(path)], validate=mode)
    except PyschedError as e:
        assert e.exit_code == 2, e
        return
    if mode == "ignore":
        assert not any("--validate=strict" in w and "unknown field" in w for w in cluster.warnings)


@FUZZ
@given(st.data())
def test_repeated_keys_are_always_caught(data: st.DataObject) -> None:
    lines = _dump([copy.deepcopy(SEEDS[2])], False).splitlines()
    keyed = [i for i, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("-")]
    i = data.draw(st.sampled_from(keyed), label="line")
    line = lines[i]
    if line.rstrip().endswith(":"):  # a key whose value is a block below: repeat it with a scalar
        line = line.rstrip() + " x"
    path = TMP / "dup.yaml"
    path.write_text("\n".join([*lines[: i + 1], line, *lines[i + 1:]]) + "\n")
    try:
        load_snapshot([str(path)])
    except PyschedError as e:
        assert e.exit_code == 2, e
        return
    raise AssertionError(f"repeated key on line {i + 2} was accepted")
