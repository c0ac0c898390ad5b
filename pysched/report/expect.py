"""Expectations on a simulation (``expect:`` clauses) and their JUnit XML report.

An ``expect:`` list is what a CI job asserts about a what-if: every clause is checked against the
simulation's outcome and becomes one JUnit test case. The clauses:

- ``allScheduled: true`` — every simulated pod ends bound;
- ``maxPending: N`` — at most N simulated pods end without a node (unschedulable, gated, nominated, error);
- ``noPreemption: true`` — no pod preempts;
- ``pods:`` (``NS/NAME``, or ``{namespace, selector}`` with a LabelSelector on pod labels) or
  ``workload: Kind/[NS/]NAME`` (the pods a ReplicaSet, StatefulSet, Job, ... owns, or a Deployment owns through
  its ReplicaSets), with ``landOn:`` a node LabelSelector — every such pod ends bound to a matching node.

Each clause may carry a ``name:`` (the test case's name). The list stands on its own (``simulate --expect
FILE``) so that scenario files can carry the same clauses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from pysched.controllers.edits import register_step
from pysched.errors import InputError, SelectorError
from pysched.lazyclass import dataclass
from pysched.model.labels import LabelSelector
from pysched.report import summary as sm
from pysched.scheduler.simulation import SimulationResult

CLAUSES = ("allScheduled", "maxPending", "noPreemption", "pods", "workload")
_KEYS = frozenset({*CLAUSES, "name", "landOn"})


@dataclass(slots=True)
class Expectation:
    kind: str  # one of CLAUSES
    name: str
    value: Any = None
    land_on: LabelSelector | None = None
    land_on_text: str = ""
    pod_selector: LabelSelector | None = None
    namespace: str | None = None


@dataclass(slots=True)
class Verdict:
    expectation: Expectation
    passed: bool
    message: str  # one line: why it failed, or what was checked
    details: list[str] = field(default_factory=list)


def _n(n: int, word: str = "pod") -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def _err(source: str, i: int, msg: str, key: str | None = None) -> InputError:
    where = f"expect[{i}]" + (f".{key}" if key else "")
    return InputError(msg, file=source, field=where)


def _selector(raw: object, source: str, i: int, key: str) -> LabelSelector:
    if not isinstance(raw, Mapping):
        raise _err(source, i, f"expected a label selector (matchLabels/matchExpressions), got {type(raw).__name__}",
                   key)
    try:
        return LabelSelector.parse(raw, key)
    except SelectorError as e:
        raise _err(source, i, str(e), key) from None


def _text(raw: Mapping) -> str:
    parts = [f"{k}={v}" for k, v in sorted((raw.get("matchLabels") or {}).items())]
    for e in raw.get("matchExpressions") or []:
        if isinstance(e, Mapping):
            vals = ",".join(str(v) for v in e.get("values") or [])
            parts.append(f"{e.get('key')} {e.get('operator')} ({vals})" if vals else f"{e.get('key')} {e.get('operator')}")
    return ", ".join(parts) or "any node"


def parse_expectations(raw: object, source: str) -> list[Expectation]:
    """The ``expect:`` list of a file (the list itself, or a mapping holding it under ``expect``)."""
    if isinstance(raw, Mapping):
        if "expect" not in raw:
            raise InputError("expected an 'expect:' list of expectations", file=source)
        raw = raw["expect"]
    if not isinstance(raw, list) or not raw:
        raise InputError("expect: expected a non-empty list of expectations", file=source, field="expect")
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise _err(source, i, f"expected a mapping, got {type(item).__name__}")
        unknown = sorted(set(item) - _KEYS)
        if unknown:
            raise _err(source, i, f"unknown field {unknown[0]!r} (expected one of {', '.join(sorted(_KEYS))})")
        kinds = [k for k in CLAUSES if k in item]
        if len(kinds) != 1:
            raise _err(source, i, f"expected exactly one of {', '.join(CLAUSES)}, got {len(kinds)}")
        kind = kinds[0]
        value = item[kind]
        name = item.get("name")
        if name is not None and not isinstance(name, str):
            raise _err(source, i, "expected a string", "name")
        e = Expectation(kind, "", value)
        if kind in ("allScheduled", "noPreemption"):
            if value is not True:
                raise _err(source, i, "expected true", kind)
        elif kind == "maxPending":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise _err(source, i, "expected a whole number, 0 or more", kind)
        else:
            if "landOn" not in item:
                raise _err(source, i, f"{kind} needs landOn: a node label selector")
            e.land_on = _selector(item["landOn"], source, i, "landOn")
            e.land_on_text = _text(item["landOn"])
            if kind == "pods":
                if isinstance(value, str):
                    if "/" not in value:
                        raise _err(source, i, "expected NAMESPACE/NAME or {namespace, selector}", kind)
                elif isinstance(value, Mapping):
                    e.namespace = value.get("namespace")
                    if e.namespace is not None and not isinstance(e.namespace, str):
                        raise _err(source, i, "expected a string", "pods.namespace")
                    e.pod_selector = _selector(value.get("selector") or {}, source, i, "pods.selector")
                    e.value = _text(value.get("selector") or {})
                else:
                    raise _err(source, i, "expected NAMESPACE/NAME or {namespace, selector}", kind)
            elif not isinstance(value, str) or value.count("/") not in (1, 2):
                raise _err(source, i, "expected KIND/NAME or KIND/NAMESPACE/NAME", kind)
        e.name = name or _default_name(e)
        out.append(e)
    return out


def _default_name(e: Expectation) -> str:
    if e.kind == "allScheduled":
        return "all pods scheduled"
    if e.kind == "noPreemption":
        return "no preemption"
    if e.kind == "maxPending":
        return f"at most {e.value} pending"
    what = f"pods {e.namespace + ' ' if e.namespace else ''}{e.value}" if e.kind == "pods" else str(e.value)
    return f"{what} land on {e.land_on_text}"


# ---------------------------------------------------------------------------------------------- checking
def _owned_by(result: SimulationResult, kind: str, namespace: str | None, name: str) -> set[str]:
    """Pods (ns/name) owned by ``kind/name``; a Deployment owns pods through its ReplicaSets."""
    owners = {(kind, name)}
    if kind == "Deployment":
        for rs in result.cluster.workloads.get("ReplicaSet", []):
            if (namespace is None or rs.meta.namespace == namespace) and any(
                    o.get("kind") == "Deployment" and o.get("name") == name for o in rs.meta.owner_refs):
                owners.add(("ReplicaSet", rs.meta.name))
    return {p.key for p in result.cluster.pods
            if (namespace is None or p.meta.namespace == namespace)
            and any((o.get("kind"), o.get("name")) in owners for o in p.meta.owner_refs)}


def _selected(e: Expectation, result: SimulationResult) -> set[str]:
    if e.kind == "workload":
        parts = str(e.value).split("/")
        kind, ns, name = (parts[0], None, parts[1]) if len(parts) == 2 else (parts[0], parts[1], parts[2])
        return _owned_by(result, kind, ns, name)
    if isinstance(e.value, str) and e.pod_selector is None:
        return {e.value} if any(p.key == e.value for p in result.cluster.pods) else set()
    assert e.pod_selector is not None
    return {p.key for p in result.cluster.pods if (e.namespace is None or p.meta.namespace == e.namespace)
            and e.pod_selector.matches(p.meta.labels)}


def check(expectations: list[Expectation], result: SimulationResult, data: sm.ReportData) -> list[Verdict]:
    """Every expectation's verdict, read off the simulation (nothing is simulated again)."""
    rows = {r.pod: r for r in data.rows}
    simulated = [r for r in data.rows if r.index]
    pending = [r for r in simulated if r.outcome != sm.SCHEDULED]
    out = []
    for e in expectations:
        if e.kind == "allScheduled":
            out.append(Verdict(e, not pending, f"{len(pending)} of {_n(len(simulated))} end{'s' if len(pending) == 1 else ''} without a node"
                               if pending else f"all {_n(len(simulated))} scheduled",
                               [f"{r.pod}: {r.outcome}: {r.reason}" for r in pending]))
        elif e.kind == "maxPending":
            ok = len(pending) <= e.value
            out.append(Verdict(e, ok, f"{_n(len(pending))} pending, at most {e.value} expected",
                               [f"{r.pod}: {r.outcome}: {r.reason}" for r in pending]))
        elif e.kind == "noPreemption":
            pre = [r for r in data.rows if r.preempted_in]
            out.append(Verdict(e, not pre, f"{_n(len(pre))} preempted" if pre else "no pod preempted",
                               [f"{r.pod} preempted {', '.join(r.victims)}" for r in pre]))
        else:
            out.append(_land(e, result, rows))
    return out


def _land(e: Expectation, result: SimulationResult, rows: dict[str, sm.PodRow]) -> Verdict:
    pods = sorted(_selected(e, result))
    if not pods:
        return Verdict(e, False, "no pod in the input matches")
    labels = {n.name: n.labels for n in result.cluster.nodes}
    bad = []
    for key in pods:
        node = result.bindings.get(key) or result.state.pod_node.get(key)
        if node is None:
            row = rows.get(key)
            bad.append(f"{key}: no node ({row.outcome}: {row.reason})" if row else f"{key}: no node")
        elif e.land_on is not None and not e.land_on.matches(labels.get(node, {})):
            bad.append(f"{key}: on {node}, which does not match")
    message = (f"{len(bad)} of {_n(len(pods))} not on a node matching {e.land_on_text}" if bad
               else f"{_n(len(pods))} on nodes matching {e.land_on_text}")
    return Verdict(e, not bad, message, bad)


# ---------------------------------------------------------------------------------------------- JUnit
def junit_xml(verdicts: list[Verdict], suite: str = "pysched expectations") -> str:
    """One ``<testsuite>`` (inside ``<testsuites>``), one ``<testcase>`` per expectation."""
    import xml.etree.ElementTree as ET  # only --junit writes XML; a run without it never loads expat

    failures = sum(1 for v in verdicts if not v.passed)
    root = ET.Element("testsuites", name="pysched", tests=str(len(verdicts)), failures=str(failures), errors="0")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(verdicts)), failures=str(failures),
                       errors="0", skipped="0")
    for v in verdicts:
        case = ET.SubElement(ts, "testcase", classname="pysched.expect", name=v.expectation.name)
        if not v.passed:
            f = ET.SubElement(case, "failure", message=v.message, type=v.expectation.kind)
            f.text = "\n".join([v.message, *v.details])
        elif v.details or v.message:
            ET.SubElement(case, "system-out").text = v.message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _scenario_step(value: object, where: str, base: str) -> list[Expectation]:
    """A scenario file's ``- expect: [...]`` step: the same clauses as ``--expect FILE``."""
    return parse_expectations(value, where)


register_step("expect", _scenario_step)
