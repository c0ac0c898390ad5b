"""What would make a pod fit, computed: for the nodes nearest to accepting the pod, each failing Filter
plugin is asked for the smallest change that flips its verdict (``WhatIfPlugin.what_would_fit``, discovered
through the registry like every other extension point), and every change is checked by running PreFilter
and Filter again on modified copies of the nodes and of the pod (``checks.py``).

The results are plain dataclasses; ``report/explain.py`` words and draws them.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin
from pysched.framework.runtime import Framework
from pysched.framework.status import Code, Status
from pysched.framework.whatif import OTHER, Change, WhatIfPlugin
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.scheduler.explain.checks import Checker, failing, not_passing_all, passes, plugin_reason, reason
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.nodeinfo import NodeInfo

NEAREST = 5  # nodes for which a change is computed


@dataclass(slots=True)
class NodeSuggestion:
    node: str
    failing: dict[str, str]  # plugin -> its reason now, in the profile's filter order
    changes: list[Change]
    fits_after: bool = False  # every change applied together: every filter passes (checked)
    still_failing: dict[str, str] = field(default_factory=dict)  # plugin -> reason with every change applied

    def to_dict(self) -> dict:
        return {"node": self.node, "failing": dict(self.failing), "changes": [c.to_dict() for c in self.changes],
                "fits_after": self.fits_after, "still_failing": dict(self.still_failing)}


@dataclass(slots=True)
class WhatIf:
    pod: str
    nodes: int  # nodes in the cluster
    candidates: int = 0  # nodes the filters ran on (after PreFilter narrowed them)
    prefilter_reject: str | None = None  # PreFilter rejected the pod: no node can be changed to help
    prefilter_narrowed_by: list[str] = field(default_factory=list)
    feasible_now: list[str] = field(default_factory=list)  # nodes that pass every filter in this state
    suggestions: list[NodeSuggestion] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"pod": self.pod, "nodes": self.nodes, "candidates": self.candidates,
                "prefilter_reject": self.prefilter_reject, "prefilter_narrowed_by": list(self.prefilter_narrowed_by),
                "feasible_now": list(self.feasible_now), "nodes_nearest": [s.to_dict() for s in self.suggestions]}


def compute_whatif(fwk: Framework, cs: ClusterState, pod: Pod, limit: int = NEAREST) -> WhatIf:
    """For up to ``limit`` nodes with the fewest failing filter plugins, the smallest change per plugin."""
    out = WhatIf(pod.key, len(cs.node_infos))
    state = CycleState()
    pre, st, returned = fwk.run_pre_filter(state, pod, cs.node_infos)
    if st is not None and st.code != Code.Success:
        out.prefilter_reject = plugin_reason(st)
        return out
    nodes = cs.node_infos
    if pre is not None and not pre.all_nodes():
        allowed = pre.node_names or set()
        nodes = [ni for ni in nodes if ni.name in allowed]
        out.prefilter_narrowed_by = sorted(returned)
    out.candidates = len(nodes)
    verdicts = not_passing_all(fwk, cs, state, pod, nodes)
    rejected = {n: failing(v) for n, v in verdicts.items()}
    out.feasible_now = sorted(n for n, f in rejected.items() if not f)
    ranked = sorted((n for n, f in rejected.items() if f), key=lambda n: (len(rejected[n]), n))[:limit]
    ctx = Context(fwk, cs, pod, state, verdicts)
    for name in ranked:
        out.suggestions.append(ctx.suggest(cs.by_name[name], rejected[name]))
    return out


def _takes_ctx(method: Any) -> bool:
    """Whether a plugin's ``what_would_fit`` accepts the ``ctx`` keyword (the 4-argument form does not)."""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "ctx" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


class Context:
    """One pod's what-if in one state: asks the failing plugins, checks their changes. It is the
    ``WhatIfContext`` the plugins receive."""

    def __init__(self, fwk: Framework, cs: ClusterState, pod: Pod, state: CycleState,
                 verdicts: dict[str, dict[str, Status]]) -> None:
        """``verdicts``: per node the filter plugins that did not pass it (``checks.not_passing``)."""
        self.fwk = fwk
        self.cs = cs
        self.pod = pod
        self.state = state
        self.verdicts = verdicts
        self.checker = Checker(fwk, cs, pod)

    # ------------------------------------------------------------------ WhatIfContext
    @property
    def nodes(self) -> Sequence[NodeInfo]:
        return self.cs.node_infos

    def node(self, name: str) -> NodeInfo:
        return self.cs.by_name[name]

    def passing(self, plugin: str) -> list[str]:
        return sorted(n for n, v in self.verdicts.items() if passes(v.get(plugin)))

    def check(self, change: Change, node: str) -> bool:
        return self.checker.check(change, node)

    # ------------------------------------------------------------------ per node
    def suggest(self, ni: NodeInfo, rejected: dict[str, Status]) -> NodeSuggestion:
        changes = []
        for plugin, st in rejected.items():
            change = self._change(ni, plugin, st)
            if change.has_modification and not change.checked:
                self.check(change, ni.name)
            changes.append(change)
        s = NodeSuggestion(ni.name, {p: reason(st) for p, st in rejected.items()}, changes)
        applied = [c for c in changes if c.has_modification]
        if applied:
            after = failing(self.checker.verdicts(applied, ni.name))
            s.fits_after = not after
            s.still_failing = {p: reason(st) for p, st in after.items()}
        else:
            s.still_failing = dict(s.failing)
        return s

    def _change(self, ni: NodeInfo, plugin: str, st: Status) -> Change:
        """The plugin's own what-if (``WhatIfPlugin``), else none."""
        inst = self.fwk.instances.get(plugin)
        if not isinstance(inst, WhatIfPlugin):
            return Change(plugin, OTHER, reason(st))
        kwargs = {"ctx": self} if _takes_ctx(inst.what_would_fit) else {}
        try:
            change = inst.what_would_fit(self._failing_state(ni, plugin), self.pod, self._nominated_view(ni), st,
                                         **kwargs)
        except Exception as exc:  # a plugin's fault must not end the explanation
            return Change(plugin, OTHER, reason(st), details={"what_if_error": f"{type(exc).__name__}: {exc}"})
        if change is None:
            return Change(plugin, OTHER, reason(st))
        change.plugin = plugin
        change.reason = change.reason or reason(st)
        return change

    def _nominated_view(self, ni: NodeInfo) -> NodeInfo:
        """The node as the filters see it: with the nominated pods of higher or equal priority added."""
        added, _, ni_nom, err = self.fwk.add_nominated_pods(self.state, self.pod, ni)
        return ni_nom if added and err is None else ni

    def _failing_state(self, ni: NodeInfo, plugin: str) -> CycleState:
        """The PreFilter state in which ``plugin`` rejected ``ni``: with the nominated pods counted in, or
        (upstream's second run) without them."""
        added, state_nom, ni_nom, err = self.fwk.add_nominated_pods(self.state, self.pod, ni)
        if not added or err is not None:
            return self.state
        inst = self.fwk.instances.get(plugin)
        st = inst.filter(state_nom, self.pod, ni_nom) if isinstance(inst, FilterPlugin) else None
        return state_nom if not passes(st) else self.state
