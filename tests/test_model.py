"""Quantities, selectors, tolerations and pod requests as the API defines them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from pysched.errors import QuantityError, SelectorError
from pysched.model.labels import LabelSelector, NodeSelector
from pysched.model.objects import Taint, Toleration, parse_pod
from pysched.model.quantity import milli_to_value, to_milli


@pytest.mark.parametrize(("text", "milli"), [
    ("250m", 250), ("1", 1000), ("1.5", 1500), ("0.5m", 1), ("1Ki", 1024000), ("1.5Gi", 1610612736000),
    ("1e3", 1000000), ("1E-3", 1), ("5n", 1), ("2k", 2000000), ("1M", 10**9), (".5", 500), ("+2", 2000),
    (3, 3000), ("100u", 1),
], ids=lambda v: str(v))
def test_quantity_to_milli(text, milli) -> None:
    assert to_milli(text) == milli


@pytest.mark.parametrize("text", ["2x", "", "1.2.3", "Gi", "--1", "1 Gi", True], ids=repr)
def test_invalid_quantity(text) -> None:
    with pytest.raises(QuantityError):
        to_milli(text)


@pytest.mark.parametrize(("milli", "value"), [(1, 1), (1000, 1), (1001, 2), (0, 0), (1500, 2)])
def test_value_rounds_up(milli, value) -> None:
    assert milli_to_value(milli) == value


@pytest.mark.parametrize(("selector", "labels", "match"), [
    (None, {"a": "b"}, False),
    ({}, {"a": "b"}, True),
    ({"matchLabels": {"a": "b"}}, {"a": "b"}, True),
    ({"matchLabels": {"a": "b"}}, {"a": "c"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]}, {"a": "y"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
], ids=["nil-nothing", "empty-everything", "eq", "eq-miss", "notin-absent", "in", "exists", "doesnotexist"])
def test_label_selector(selector, labels, match) -> None:
    assert LabelSelector.parse(selector).matches(labels) is match


@pytest.mark.parametrize("selector", [
    {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
    {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
    {"matchExpressions": [{"key": "-bad", "operator": "Exists"}]},
    {"matchLabels": {"a": "bad value!"}},
], ids=["gt-not-for-labels", "in-empty", "bad-key", "bad-value"])
def test_invalid_label_selector(selector) -> None:
    with pytest.raises(SelectorError):
        LabelSelector.parse(selector)


def _ns(*terms: dict) -> NodeSelector:
    return NodeSelector.parse({"nodeSelectorTerms": list(terms)})


@pytest.mark.parametrize(("selector", "labels", "name", "match"), [
    (_ns(), {"a": "1"}, "n1", False),
    (_ns({}), {"a": "1"}, "n1", False),
    (_ns({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["0"]}]}), {"a": "1"}, "n1", True),
    (_ns({"matchExpressions": [{"key": "a", "operator": "Lt", "values": ["0"]}]}), {"a": "1"}, "n1", False),
    (_ns({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]},
         {"matchExpressions": [{"key": "a", "operator": "Exists"}]}), {"a": "1"}, "n1", True),
    (_ns({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), {}, "n1", True),
    (_ns({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}), {}, "n2", False),
    (_ns({"matchExpressions": [{"key": "z", "operator": "NotIn", "values": ["x"]}]}), {}, "n1", True),
], ids=["no-terms", "empty-term-dropped", "gt", "lt", "invalid-term-others-evaluated", "fields-in",
        "fields-miss", "notin-missing"])
def test_node_selector(selector, labels, name, match) -> None:
    assert selector.matches(labels, name) is match


@pytest.mark.parametrize(("tol", "taint", "ok"), [
    (Toleration("k", "Equal", "v", "NoSchedule"), Taint("k", "v", "NoSchedule"), True),
    (Toleration("k", "", "v", ""), Taint("k", "v", "NoExecute"), True),
    (Toleration("", "Exists", "", ""), Taint("any", "x", "NoSchedule"), True),
    (Toleration("k", "Equal", "w", "NoSchedule"), Taint("k", "v", "NoSchedule"), False),
    (Toleration("k", "Exists", "", "PreferNoSchedule"), Taint("k", "v", "NoSchedule"), False),
], ids=["equal", "empty-effect", "wildcard", "value-differs", "effect-differs"])
def test_toleration(tol, taint, ok) -> None:
    assert tol.tolerates(taint) is ok


def _pod(containers: list[dict], init: list[dict] | None = None, **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": containers, "initContainers": init or [], **spec}}


def _c(name: str, restart: str | None = None, **req: str) -> dict:
    c = {"name": name, "image": "i", "resources": {"requests": req}}
    if restart:
        c["restartPolicy"] = restart
    return c


@pytest.mark.parametrize(("raw", "cpu", "non0_cpu", "non0_mem"), [
    (_pod([_c("a", cpu="1"), _c("b")]), 1000, 1100, 2 * 209715200),
    (_pod([_c("a", cpu="0.5m"), _c("b", cpu="0.5m")]), 2, 2, 2 * 209715200),
    (_pod([_c("a", cpu="1")], [_c("i", cpu="3")]), 3000, 3000, 209715200),
    (_pod([_c("a", cpu="1")], [_c("s", "Always", cpu="1"), _c("i", cpu="1500m")]), 2500, 2500, 2 * 209715200),
    (_pod([_c("a", cpu="1")], overhead={"cpu": "250m"}), 1250, 1250, 209715200),
    (_pod([_c("a", cpu="1")], resources={"requests": {"cpu": "3"}}), 3000, 3000, 209715200),
], ids=["nonzero-defaults", "sub-milli-per-container", "init-max", "sidecar", "overhead", "pod-level"])
def test_pod_requests(raw, cpu, non0_cpu, non0_mem) -> None:
    pod = parse_pod(raw)
    assert pod.requests.milli_cpu == cpu
    assert pod.non0_cpu == non0_cpu
    assert pod.non0_mem == non0_mem


def test_limits_default_requests() -> None:
    raw = _pod([{"name": "a", "image": "i", "resources": {"limits": {"cpu": "2", "memory": "1Gi"}}}])
    pod = parse_pod(raw)
    assert (pod.requests.milli_cpu, pod.requests.memory) == (2000, 1 << 30)


_QTY = st.sampled_from(["0", "100m", "1", "2500m", "64Mi", "1Gi", "3"])
_REQS = st.dictionaries(st.sampled_from(["cpu", "memory", "ephemeral-storage", "example.com/gpu"]), _QTY, max_size=4)


@settings(max_examples=150, deadline=None)
@given(st.lists(_REQS, min_size=0, max_size=3), st.one_of(st.none(), _REQS))
def test_one_pass_requests_equal_compute_requests(containers: list, overhead: dict | None) -> None:
    """The one-pass PodRequests of pods without init containers or pod-level resources (derive_pod)
    equals upstream's two computations (compute_requests without and with the non-zero defaults)."""
    from pysched.model.resources import CPU, MEMORY, NON_ZERO_DEFAULTS, Resource
    raw = _pod([{"name": f"c{i}", "image": "i", "resources": {"requests": r}} for i, r in enumerate(containers)],
               **({"overhead": overhead} if overhead is not None else {}))
    pod = parse_pod(raw)
    assert pod.requests == Resource.from_list(pod.compute_requests())
    non0 = pod.compute_requests(NON_ZERO_DEFAULTS)
    assert (pod.non0_cpu, pod.non0_mem) == (non0.get(CPU, 0), -((-non0.get(MEMORY, 0)) // 1000))


@settings(max_examples=300, deadline=None)
@given(st.from_regex(r"[0-9]{1,20}(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?", fullmatch=True))
def test_whole_quantities_read_as_the_exact_parser_reads_them(text: str) -> None:
    """``to_milli``'s integer path for whole numbers with a suffix agrees with the exact (Fraction) one."""
    from pysched.model import quantity
    quantity._cache.pop(text, None)
    exact = quantity.parse_quantity(text) * 1000
    assert to_milli(text) == -((-exact.numerator) // exact.denominator)


@pytest.mark.parametrize("kind", ["PersistentVolumeClaim", "PersistentVolume"])
def test_volume_copies_are_the_dataclass_replace_copies(kind: str) -> None:
    """PVC/PV.copy: every field the same object as in ``dataclasses.replace``'s copy, but the annotations,
    which the copy owns (binding writes them)."""
    import dataclasses

    from pysched.model.storage import parse_pv, parse_pvc

    meta = {"name": "data", "namespace": "ns", "annotations": {"a": "1"}}
    obj = parse_pvc({"metadata": meta, "spec": {"storageClassName": "fast", "resources": {
        "requests": {"storage": "1Gi"}}, "accessModes": ["ReadWriteOnce"]}}) if kind == "PersistentVolumeClaim" \
        else parse_pv({"metadata": meta, "spec": {"capacity": {"storage": "1Gi"}, "storageClassName": "fast",
                                                  "claimRef": {"namespace": "ns", "name": "data"}}})
    copied, replaced = obj.copy(), dataclasses.replace(obj)
    assert copied is not obj
    for f in dataclasses.fields(obj):
        if f.name != "annotations":
            assert getattr(copied, f.name) is getattr(replaced, f.name) is getattr(obj, f.name), f.name
    assert copied.annotations == obj.annotations and copied.annotations is not obj.annotations
    copied.annotations["b"] = "2"
    assert "b" not in obj.annotations


@pytest.mark.parametrize("raw", [
    {"key": "k", "value": "v", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"},
    {"key": "k", "value": None, "effect": "PreferNoSchedule"}, {"key": "", "effect": "NoSchedule"},
    {"key": "k", "effect": "Sometimes"}, {"key": "k"}, {"key": 1, "effect": "NoSchedule"},
    {"key": "k", "value": 2, "effect": "NoSchedule"}, {"effect": "NoSchedule"}])
def test_taint_fast_path_reads_as_the_general_one(raw: dict) -> None:
    """A plain dict takes the fast path (remembered taints); any other mapping the field-by-field one."""
    from types import MappingProxyType

    from pysched.model.objects import FieldError

    def outcome(r: object) -> object:
        try:
            t = Taint.parse(r, "spec.taints[0]")
        except FieldError as e:
            return (e.path, e.message)
        return (type(t), t.key, t.value, t.effect)

    assert outcome(raw) == outcome(MappingProxyType(raw)) == outcome(dict(raw))


@pytest.mark.parametrize("raw", [
    {"operator": "Exists"}, {"key": "k", "value": "v"}, {"key": "k", "operator": "Equal", "value": "v", "effect": ""},
    {"operator": "In"}, {"key": 1}, {"effect": "Sometimes"}, {"value": None, "effect": None, "operator": None},
    {"key": "k", "operator": "Exists", "effect": "NoExecute"}, {"value": 3}, {"operator": ""}])
def test_toleration_fast_path_reads_as_the_general_one(raw: dict) -> None:
    from types import MappingProxyType

    from pysched.model.objects import FieldError

    def outcome(r: object) -> object:
        try:
            t = Toleration.parse(r, "spec.tolerations[0]")
        except FieldError as e:
            return (e.path, e.message)
        return (type(t), t.key, t.operator, t.value, t.effect)

    assert outcome(raw) == outcome(MappingProxyType(raw)) == outcome(dict(raw))
