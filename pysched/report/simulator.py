"""pysched's cycles as kube-scheduler-simulator result annotations (``simulate --annotate FILE``).

The simulator's "debuggable scheduler" records every extension point's result on the pod, as JSON strings
under ``kube-scheduler-simulator.sigs.k8s.io/`` annotations (its ``simulator/scheduler/plugin/annotation``
keys, with the values its result store writes); its web UI shows them. This module writes the same keys
and value shapes from pysched's trace.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from pysched.errors import InputError
from pysched.framework.config import SchedulerConfig
from pysched.framework.status import Code, Status
from pysched.scheduler.simulation import SimulationResult
from pysched.scheduler.trace import CycleTrace

# the simulator's annotation keys (simulator/scheduler/plugin/annotation) and its fixed messages
PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
PREFILTER_STATUS = PREFIX + "prefilter-result-status"
PREFILTER_RESULT = PREFIX + "prefilter-result"
FILTER = PREFIX + "filter-result"
POSTFILTER = PREFIX + "postfilter-result"
PRESCORE = PREFIX + "prescore-result"
SCORE = PREFIX + "score-result"
FINALSCORE = PREFIX + "finalscore-result"
RESERVE = PREFIX + "reserve-result"
PERMIT = PREFIX + "permit-result"
PERMIT_TIMEOUT = PREFIX + "permit-result-timeout"
PREBIND = PREFIX + "prebind-result"
BIND = PREFIX + "bind-result"
SELECTED_NODE = PREFIX + "selected-node"
RESULT_HISTORY = PREFIX + "result-history"
PASSED, SUCCESS, VICTIM = "passed", "success", "preemption victim"
RESULT_KEYS = (PREFILTER_STATUS, PREFILTER_RESULT, FILTER, POSTFILTER, PRESCORE, SCORE, FINALSCORE, RESERVE,
               PERMIT, PERMIT_TIMEOUT, PREBIND, BIND, SELECTED_NODE)


def _message(st: Status) -> str:
    return SUCCESS if st.code == Code.Success else st.message() or st.code.name


def _json(value: Any) -> str:
    # Go's encoding/json writes map keys sorted and no blanks
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def result_annotations(c: CycleTrace, score_plugins: list[str] | None = None) -> dict[str, str]:
    """One cycle as the simulator's annotations (every value a JSON string, as the simulator writes them).

    ``filter-result``: per evaluated node, the plugins in order up to the first that rejected it (upstream
    stops there), ``passed`` or the rejection message. ``score-result`` carries the weighted, normalized
    score pysched keeps (it does not keep the raw plugin score); ``finalscore-result`` the same. For the
    extension points pysched records no per-plugin status for: ``prescore-result`` lists the PreScore
    plugins that went on to score as ``success``, ``bind-result`` is ``DefaultBinder: success`` for a bound
    pod, reserve, permit and prebind are ``{}``.
    """
    a: dict[str, str] = {}
    prefilter_status: dict[str, str] = {}
    if c.prefilter_reject is not None and c.prefilter_reject.plugin:
        prefilter_status[c.prefilter_reject.plugin] = _message(c.prefilter_reject)
    a[PREFILTER_STATUS] = _json(prefilter_status)
    a[PREFILTER_RESULT] = _json({"PreFilter": c.prefilter_nodes} if c.prefilter_nodes is not None else {})
    filters: dict[str, dict[str, str]] = {}
    for node, verdicts in (c.filter_all or {}).items():
        row: dict[str, str] = {}
        for plugin, st in verdicts.items():
            if st.code == Code.Skip:
                continue
            if st.code == Code.Success:
                row[plugin] = PASSED
            else:
                row[plugin] = st.message() or st.code.name
                break
        filters[node] = row
    a[FILTER] = _json(filters)
    post: dict[str, dict[str, str]] = {}
    if c.preemption is not None and c.nominated_node:
        post = {n: {} for n in c.preemption.potential_nodes}
        post.setdefault(c.nominated_node, {})["DefaultPreemption"] = VICTIM
    a[POSTFILTER] = _json(post)
    scores = {n: {p: str(v) for p, v in per.items()} for n, per in (c.scores or {}).items()}
    a[SCORE] = _json(scores)
    a[FINALSCORE] = _json(scores)
    bound = c.outcome == "Scheduled"
    scored = {p for per in (c.scores or {}).values() for p in per}
    ran = {p: SUCCESS for p in (score_plugins or []) if p in scored}  # PreScore ran and did not skip
    a[PRESCORE] = _json(ran)
    a[RESERVE] = _json({})
    a[PERMIT] = _json({})
    a[PERMIT_TIMEOUT] = _json({})
    a[PREBIND] = _json({})
    a[BIND] = _json({"DefaultBinder": SUCCESS} if bound else {})
    if bound and c.node:
        a[SELECTED_NODE] = c.node
    return a


def annotated_pod(raw: Mapping[str, Any], cycles: list[CycleTrace], score_plugins: list[str] | None = None,
                  node: str | None = None) -> dict:
    """A copy of ``raw`` carrying the last cycle's annotations and every cycle in ``result-history``; with
    ``node`` (the pod was bound) ``spec.nodeName`` is set, as the binding would."""
    pod = copy.deepcopy(dict(raw))
    meta = pod.setdefault("metadata", {})
    annotations = dict(meta.get("annotations") or {})
    history = [result_annotations(c, score_plugins) for c in cycles]
    if history:
        annotations.update(history[-1])
        annotations[RESULT_HISTORY] = _json(history)
    meta["annotations"] = annotations
    if node:
        pod.setdefault("spec", {})["nodeName"] = node
    return pod


def annotated_export(result: SimulationResult, config: SchedulerConfig) -> dict:
    """The simulator's import format with every input pod — a simulated one carrying its cycles as
    annotations (and ``spec.nodeName`` when the simulation bound it) — and every node."""
    cycles: dict[str, list[CycleTrace]] = {}
    for c in result.cycles:
        cycles.setdefault(c.pod, []).append(c)
    score_plugins = {p.scheduler_name: [ref.name for ref in p.enabled("preScore")] for p in config.profiles}
    pods = []
    for pod in result.cluster.pods:
        own = cycles.get(pod.key, [])
        if not own:
            pods.append(copy.deepcopy(pod.raw))
            continue
        bound = result.bindings.get(pod.key) if own[-1].outcome == "Scheduled" else None
        pods.append(annotated_pod(pod.raw, own, score_plugins.get(own[-1].profile), node=bound))
    return {"pods": pods, "nodes": [copy.deepcopy(n.raw) for n in result.cluster.nodes]}


def write_annotated_export(path: str, result: SimulationResult, config: SchedulerConfig) -> None:
    text = json.dumps(annotated_export(result, config), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}", field="--annotate") from None
