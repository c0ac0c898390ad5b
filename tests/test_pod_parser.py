"""PodParser (the loader's parse_pod and validate_pod, the spec-derived fields read once per distinct
spec) against parse_pod and validate_pod themselves: the same Pods, the same errors, pod by pod."""

from __future__ import annotations

import copy
import dataclasses
import math

import pytest

from pysched.model.objects import FieldError, ObjectMeta, PodParser, parse_pod, validate_pod


def _view(x: object, depth: int = 0) -> object:
    """A comparable form of a parsed value: dataclasses and slotted objects as their fields' values."""
    assert depth < 40
    if isinstance(x, dict):
        return {k: _view(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple, frozenset, set)):
        return (type(x).__name__, [_view(v, depth + 1) for v in (sorted(x) if isinstance(x, (set, frozenset)) else x)])
    slots = [s for cls in type(x).__mro__ for s in getattr(cls, "__slots__", ())]
    if slots and not isinstance(x, (str, int, float)):
        return (type(x).__name__, {s: _view(getattr(x, s), depth + 1) for s in slots if hasattr(x, s)})
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return x


def _pod(name: str, spec: dict, ns: str | None = "default", status: dict | None = None, **meta: object) -> dict:
    md: dict = {"name": name, **meta}
    if ns is not None:
        md["namespace"] = ns
    out = {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}
    if status is not None:
        out["status"] = status
    return out


_SPEC = {
    "containers": [{"name": "main", "image": "web:1", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"},
                                                                     "limits": {"cpu": "1"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}]}],
    "initContainers": [{"name": "side", "image": "s:1", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "50m"}}}],
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
    "nodeSelector": {"pool": "general"},
    "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]},
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
    "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                   "labelSelector": {"matchLabels": {"app": "web"}}}],
    "priority": 100,
    "overhead": {"cpu": "10m"},
}


def _with(**changes: object) -> dict:
    spec = copy.deepcopy(_SPEC)
    spec.update(changes)
    return spec


# pods in load order; each case's pods share specs (or nearly) so that the parser's memory is used
CASES = {
    "replicas": [_pod(f"web-{i}", _with(), status={"phase": "Pending"}) for i in range(4)],
    "bound and pending replicas": [
        _pod("a", {**_with(), "nodeName": "n1"}, status={"phase": "Running", "startTime": "2025-03-01T08:00:00Z"}),
        _pod("b", _with(), status={"phase": "Pending"}),
        _pod("c", {**_with(), "nodeName": "n2"}, uid="u-c", creationTimestamp="2025-03-01T08:00:00Z"),
        _pod("d", {**_with(), "nodeName": "n2"}, ns="other")],
    # terms without namespaces take the pod's own: the namespace is part of what is remembered
    "affinity in two namespaces": [_pod("a", _with(), ns="team-a"), _pod("b", _with(), ns="team-b"),
                                   _pod("c", _with(), ns=None), _pod("d", _with(), ns=""),
                                   _pod("e", _with(), ns="team-a")],
    # equal JSON text, unequal values: NaN and None both write null
    "nan and null": [_pod("a", _with(priority=None)), _pod("b", _with(priority=float("nan"))),
                     _pod("c", _with(priority=None)), _pod("d", _with(priority=float("nan")))],
    # specs that differ, affinities that are equal (read once) or written alike
    "one affinity, several specs": [_pod(f"p{i}", _with(priority=i), ns=ns) for i, ns in
                                    enumerate(["a", "a", "b", "a", None, "b"])],
    "affinity nan and null": [
        _pod(f"p{i}", _with(priority=i, affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": w, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]}}))
        for i, w in enumerate([None, float("nan"), None, float("nan")])],
    "affinity valid, node selector not": [_pod("a", _with(priority=1)),
                                          _pod("b", _with(priority=2, nodeSelector={"pool": "-bad-"})),
                                          _pod("c", _with(priority=3))],
    "true and 1": [_pod("a", _with(hostNetwork=True)), _pod("b", _with(hostNetwork=1)),
                   _pod("c", _with(hostNetwork=True))],
    "key order": [_pod("a", {"containers": [{"name": "m", "image": "i"}], "priority": 1}),
                  _pod("b", {"priority": 1, "containers": [{"name": "m", "image": "i"}]})],
    "a bad spec repeated": [_pod(f"p{i}", _with(priority="high")) for i in range(3)],
    "an invalid selector repeated": [
        _pod(f"p{i}", _with(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]},
             "topologyKey": "zone"}]}})) for i in range(3)],
    "an invalid node selector repeated": [_pod(f"p{i}", _with(nodeSelector={"pool": "-bad-"})) for i in range(3)],
    "errors outside the spec": [
        _pod("a", {**_with(), "nodeName": "n1"}),
        _pod("b", {**_with(), "nodeName": 7}),
        _pod("c", _with(), status={"phase": 3}),
        _pod("d", _with(), status={"startTime": "yesterday"}),
        _pod("e", _with(), status="Running"),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "f", "uid": 5}, "spec": _with()},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "g", "namespace": ["x"]}, "spec": _with()},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "h", "labels": {"a": 1}}, "spec": _with()},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "i", "creationTimestamp": ""}, "spec": _with()},
        _pod("j", _with(), status={"phase": "Pending", "conditions": [{"type": "PodScheduled"}, "x"]}),
        _pod("k", _with(), status={"phase": "Pending", "startTime": ""}),
        _pod("l", _with(), status={"phase": "Running", "nominatedNodeName": "n1"}),
        _pod("m", _with(), status={"phase": "Running", "startTime": "2025-03-01T08:00:00Z",
                                   "conditions": [{"type": "Ready"}]}),
        _pod("n", _with(), status={"startTime": "2025-03-01T08:00:00Z", "nominatedNodeName": 4}),
        _pod("o", _with(), status={"phase": "Running", "startTime": "2025-03-01T08:00:00Z"})],
    "what orjson does not write": [_pod("a", _with(priority=1 << 70)), _pod("b", _with(priority=1 << 70)),
                                   _pod("c", {**_with(), 5: "x"}), _pod("d", {**_with(), 5: "x"})],
    # specs that differ, spread constraints that are equal (read once), written alike, or bad
    "spread constraints": [
        _pod(f"p{i}", _with(priority=i, topologySpreadConstraints=[{
            "maxSkew": skew, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]))
        for i, skew in enumerate([1, 1, True, 1, float("nan"), None, 0, 0, 1.0, 1])],
    "tolerations and their fast path": [
        _pod(f"p{i}", _with(priority=i, tolerations=t)) for i, t in enumerate([
            [{"operator": "Exists"}], [{"operator": "Exists"}], [{"key": "k", "value": "v"}],
            [{"key": "k", "operator": "Equal", "value": "v", "effect": ""}], [{"operator": "In"}],
            [{"key": 1, "operator": "Exists"}], [{"effect": "Sometimes"}], [{"value": None, "effect": None}],
            ["x"], [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]])],
    "no spec": [_pod("a", None), {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}},  # type: ignore[arg-type]
                _pod("c", [1])],  # type: ignore[arg-type]
}


def _outcome(parse, validate, raw: dict, index: int) -> object:  # type: ignore[no-untyped-def]
    try:
        pod = parse(raw, index)
    except FieldError as e:
        return ("parse error", e.path, e.message)
    try:
        validate(raw)
    except FieldError as e:
        return (_view(pod), "validate error", e.path, e.message)
    return _view(pod)


@pytest.mark.parametrize("pods", list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize("labels_valid", [False, True])
def test_same_pods_and_errors_as_parse_pod(pods: list[dict], labels_valid: bool) -> None:
    parser = PodParser()
    for i, raw in enumerate(pods):
        before = copy.deepcopy(raw)
        want = _outcome(lambda r, n: parse_pod(r, n, labels_valid), validate_pod, raw, i)
        got = _outcome(lambda r, n: parser.parse(r, n, labels_valid), parser.validate, raw, i)
        assert got == want, raw["metadata"]
        assert repr(raw) == repr(before)  # the input is not changed


def test_replicas_share_the_parsed_spec() -> None:
    parser = PodParser()
    a = parser.parse(_pod("a", {**_with(), "nodeName": "n1"}, status={"phase": "Running"}), 0)
    b = parser.parse(_pod("b", _with(), status={"phase": "Pending"}), 1)
    c = parser.parse(_pod("c", _with(), ns="other"), 2)
    assert b.containers is a.containers and b.affinity is a.affinity and b.requests is a.requests
    assert (a.node_name, b.node_name, a.phase, b.phase, b.key, b.index) == ("n1", "", "Running", "Pending",
                                                                              "default/b", 1)
    assert c.affinity is not a.affinity and c.affinity.required_anti[0].namespaces == frozenset({"other"})


def test_stops_remembering_when_few_specs_repeat() -> None:
    parser = PodParser()
    for i in range(PodParser.PROBE + 1):
        parser.parse(_pod(f"p{i}", _with(priority=i)), i)
    assert parser._memo is None
    pod = parser.parse(_pod("again", _with(priority=3)), 0)  # parsed as parse_pod parses it
    assert _view(pod) == _view(parse_pod(_pod("again", _with(priority=3)), 0))


def test_spread_constraints_read_once_for_specs_that_differ() -> None:
    parser = PodParser()
    a = parser.parse(_pod("a", _with(priority=1)), 0)
    b = parser.parse(_pod("b", _with(priority=2)), 1)
    assert a.containers is not b.containers and b.spread_constraints is a.spread_constraints


# what PodParser.expect finds of each case's pods: position of a pod -> position of the pod that had its spec first
# (equal but for nodeName, in the same namespace, and of equal values: NaN is not None, True is not 1)
REPEATS = {
    "replicas": {1: 0, 2: 0, 3: 0},
    "bound and pending replicas": {1: 0, 2: 0},
    "affinity in two namespaces": {3: 2, 4: 0},
    "nan and null": {},
    "true and 1": {2: 0},
    "key order": {},
    "what orjson does not write": {},
    "no spec": {},
}


@pytest.mark.parametrize(("pods", "repeats"), [(CASES[k], v) for k, v in REPEATS.items()], ids=list(REPEATS))
def test_expect_finds_the_specs_parse_would_share(pods: list[dict], repeats: dict[int, int]) -> None:
    assert PodParser().expect(pods, range(len(pods))) == repeats


@pytest.mark.parametrize("pods", list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize("labels_valid", [False, True])
def test_pods_looked_up_ahead_are_parse_pods_pods(pods: list[dict], labels_valid: bool) -> None:
    # the loader's way: every pod's spec looked up first (expect), then each pod parsed by its position
    objects = [{"kind": "Node"}, *pods]  # (positions are the objects', not the pods')
    parser = PodParser()
    parser.expect(objects, range(1, len(objects)))
    for i, raw in enumerate(pods):
        want = _outcome(lambda r, n: parse_pod(r, n, labels_valid), validate_pod, raw, i)
        got = _outcome(lambda r, n: parser.parse(r, n, labels_valid, n + 1), parser.validate, raw, i)
        assert got == want, raw["metadata"]


def test_pods_looked_up_ahead_share_the_parsed_spec() -> None:
    pods = [_pod("a", {**_with(), "nodeName": "n1"}), _pod("b", _with()), _pod("c", _with(), ns="other")]
    parser = PodParser()
    assert parser.expect(pods, range(3)) == {1: 0}
    a, b, c = (parser.parse(raw, i, False, i) for i, raw in enumerate(pods))
    assert b.containers is a.containers and b.requests is a.requests and c.containers is not a.containers


def test_expect_stops_looking_up_when_few_specs_repeat() -> None:
    pods = [_pod(f"p{i}", _with(priority=i)) for i in range(PodParser.PROBE + 2)]
    parser = PodParser()
    assert parser.expect(pods, range(len(pods))) == {}
    assert parser._memo is None
    assert _view(parser.parse(pods[3], 3, False, 3)) == _view(parse_pod(pods[3], 3))


def _read_by_orjson(pods: list[dict]) -> list[dict] | None:
    """The pods as orjson reads their JSON (what the loader's ``exact`` documents hold), or None."""
    import orjson

    try:
        return orjson.loads(orjson.dumps(pods))
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("pods", list(CASES.values()), ids=list(CASES))
def test_expect_without_comparing_specs_read_by_orjson(pods: list[dict]) -> None:
    # exact: specs that orjson writes alike are taken as equal without ==; on what orjson read, the same
    # repeats as with the comparison, and the same Pods
    read = _read_by_orjson(pods)
    if read is None:
        pytest.skip("orjson does not write these pods")
    want = PodParser().expect(read, range(len(read)))
    parser = PodParser()
    assert parser.expect(read, range(len(read)), exact=True) == want
    for i, raw in enumerate(read):
        got = _outcome(lambda r, n: parser.parse(r, n, False, n), parser.validate, raw, i)
        assert got == _outcome(lambda r, n: parse_pod(r, n, False), validate_pod, raw, i), raw["metadata"]


def _unset_fields(obj: object) -> list[str]:
    return [f.name for f in dataclasses.fields(obj) if not hasattr(obj, f.name)]  # type: ignore[arg-type]


@pytest.mark.parametrize("pods", list(CASES.values()), ids=list(CASES))
@pytest.mark.parametrize("ahead", [False, True], ids=["parse", "expect then parse"])
def test_every_field_of_a_parsed_pod_is_set(pods: list[dict], ahead: bool) -> None:
    # the parser stores a remembered spec's pod field by field (no __init__): none may be left out
    parser = PodParser()
    if ahead:
        parser.expect(pods, range(len(pods)))
    for i, raw in enumerate(pods):
        try:
            pod = parser.parse(raw, i, True, i if ahead else -1)
        except FieldError:
            continue
        assert _unset_fields(pod) == [], raw["metadata"]
        assert _unset_fields(pod.meta) == [], raw["metadata"]
        assert dataclasses.astuple(pod.meta) == dataclasses.astuple(parse_pod(raw, i, True).meta)


META_CASES = {
    "name only": ({"name": "a"}, True, ("a", "default", "", {}, {}, "", [], None)),
    "cluster-scoped": ({"name": "a", "namespace": "x"}, False, ("a", "", "", {}, {}, "", [], None)),
    "empty namespace": ({"name": "a", "namespace": ""}, True, ("a", "default", "", {}, {}, "", [], None)),
    "every field": ({"name": "a", "namespace": "ns", "uid": "u", "labels": {"k": "v"}, "annotations": {"x": "y"},
                     "creationTimestamp": "2025-03-01T08:00:00Z", "ownerReferences": [{"kind": "ReplicaSet"}, 3],
                     "deletionTimestamp": "2025-03-01T09:00:00Z"}, True,
                    ("a", "ns", "u", {"k": "v"}, {"x": "y"}, "2025-03-01T08:00:00Z", [{"kind": "ReplicaSet"}],
                     "2025-03-01T09:00:00Z")),
}


@pytest.mark.parametrize(("raw", "namespaced", "want"), list(META_CASES.values()), ids=list(META_CASES))
def test_object_meta_fields(raw: dict, namespaced: bool, want: tuple) -> None:
    meta = ObjectMeta.parse(raw, "metadata", namespaced)
    assert _unset_fields(meta) == []
    assert dataclasses.astuple(meta) == want
