"""Running the filters again for explain: every Filter plugin's verdict on a node as the cycle sees it, and
the same with a set of what-if changes applied to copies of the nodes and of the pod.

Nothing here changes the simulation's state: modified nodes are clones (``NodeInfo.clone`` with, where a
label or the cordon changes, a copy of the ``Node``), a modified pod is a copy, and every check runs in a
fresh ``CycleState``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin
from pysched.framework.runtime import Framework, plugin_filter
from pysched.framework.status import Code, Status
from pysched.framework.whatif import Change
from pysched.model.objects import Node, Pod
from pysched.scheduler.fastfilter import MIN_NODES, batch_verdict
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import columns_for
from pysched.snapshot.nodeinfo import NodeInfo

REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending, Code.Error)


def passes(st: Status | None) -> bool:
    return st is None or st.code in (Code.Success, Code.Skip)


def reason(st: Status) -> str:
    return st.message() or st.code.name


def plugin_reason(st: Status) -> str:
    """``Plugin: reason`` when the status names its plugin."""
    return f"{st.plugin}: {reason(st)}" if st.plugin else reason(st)


def failing(verdicts: dict[str, Status]) -> dict[str, Status]:
    return {p: s for p, s in verdicts.items() if s.code in REJECTED}


def filter_verdicts(fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo) -> dict[str, Status]:
    """Every Filter plugin's verdict on ``ni`` as the cycle sees it: with the nominated pods of higher or
    equal priority added first and, when that passed, once more without them (upstream's two runs)."""
    added, st_nom, ni_nom, err = fwk.add_nominated_pods(state, pod, ni)
    if err is not None:
        return {"(nominated pods)": err}
    verdicts = fwk.run_filter_each(st_nom, pod, ni_nom)
    if added and all(passes(s) for s in verdicts.values()):
        verdicts = fwk.run_filter_each(state, pod, ni)
    return verdicts


def not_passing(fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo) -> dict[str, Status]:
    """``filter_verdicts`` without the verdicts that pass (Success, Skip): what the what-if ranks every node
    by. The same runs of the same plugins, but no status object for each of the ~13 plugins that pass on
    each of thousands of nodes."""
    added, st_nom, ni_nom, err = fwk.add_nominated_pods(state, pod, ni)
    if err is not None:
        return {"(nominated pods)": err}
    out = _not_passing(fwk, st_nom, pod, ni_nom)
    if added and not out:
        out = _not_passing(fwk, state, pod, ni)
    return out


def not_passing_all(fwk: Framework, cs: ClusterState, state: CycleState, pod: Pod,
                    nodes: list[NodeInfo]) -> dict[str, dict[str, Status]]:
    """``not_passing`` of every node in ``nodes`` (in that order). On the batched path, with no pod
    nominated anywhere, a plugin with a verdict (``batch_filter``) gives the statuses of the nodes it
    rejects from it (copies); the others run per node."""
    if cs.nominated or not fwk.handle.batched or nodes is not cs.node_infos or len(nodes) < MIN_NODES:
        return {ni.name: not_passing(fwk, state, pod, ni) for ni in nodes}
    cols = columns_for(cs)
    out: dict[str, dict[str, Status]] = {ni.name: {} for ni in nodes}
    per_row = list(out.values())
    skip = state.skip_filter_plugins
    for p in fwk.filter:
        if p.name in skip:
            continue
        v = batch_verdict(p, state, pod, cols)
        if v is None:
            for ni, failed in zip(nodes, per_row, strict=True):
                st = _failing(p, state, pod, ni)
                if st is not None:
                    failed[p.name] = st
            continue
        bad = np.flatnonzero(~v.ok)
        if len(bad):
            for row, st in zip(bad.tolist(), v.statuses(bad), strict=True):
                per_row[row][p.name] = Status(st.code, *st.reasons, error=st.error)
    return out


def _not_passing(fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo) -> dict[str, Status]:
    """``Framework.run_filter_each``, keeping only the statuses that do not pass."""
    out: dict[str, Status] = {}
    skip = state.skip_filter_plugins
    for p in fwk.filter:
        if p.name in skip:
            continue
        st = _failing(p, state, pod, ni)
        if st is not None:
            out[p.name] = st
    return out


def _failing(p: FilterPlugin, state: CycleState, pod: Pod, ni: NodeInfo) -> Status | None:
    """One plugin's Filter status on ``ni`` when it neither passes nor skips (a raised error as a fault)."""
    st = plugin_filter(p, state, pod, ni)
    if st is not None and st.code not in (Code.Success, Code.Skip):
        return st
    return None


def modified_node(node: Node, set_labels: dict[str, str], remove_labels: set[str], uncordon: bool) -> Node:
    """A copy of ``node`` with labels set or removed and, with ``uncordon``, ``spec.unschedulable`` off."""
    labels = {k: v for k, v in node.labels.items() if k not in remove_labels}
    labels.update(set_labels)
    return replace(node, meta=replace(node.meta, labels=labels),
                   unschedulable=False if uncordon else node.unschedulable)


class Checker:
    """Runs PreFilter and Filter again with a set of changes applied to copies."""

    def __init__(self, fwk: Framework, cs: ClusterState, pod: Pod) -> None:
        self.fwk = fwk
        self.cs = cs
        self.pod = pod

    def verdicts(self, changes: list[Change], target: str) -> dict[str, Status]:
        pod = self.pod
        tolerations = [t for c in changes for t in c.add_tolerations]
        if tolerations:
            pod = replace(pod, tolerations=tuple(pod.tolerations) + tuple(tolerations))
        clones: dict[str, NodeInfo] = {}

        def clone(name: str) -> NodeInfo:
            ni = clones.get(name)
            if ni is None:
                ni = clones[name] = self.cs.by_name[name].clone()
            return ni

        for c in changes:
            for e in c.evict:
                if e.obj is not None:
                    clone(e.node).remove_pod(e.obj)
        labels_set = {k: v for c in changes for k, v in c.set_labels.items()}
        labels_removed = {k for c in changes for k in c.remove_labels}
        uncordon = any(c.uncordon for c in changes)
        if labels_set or labels_removed or uncordon:
            ni = clone(target)
            ni.node = modified_node(ni.node, labels_set, labels_removed, uncordon)
        nodes = [clones.get(ni.name, ni) for ni in self.cs.node_infos]
        state = CycleState()
        pre, st, _ = self.fwk.run_pre_filter(state, pod, nodes)
        if st is not None and st.code != Code.Success:  # no Filter ran: the whole verdict is PreFilter's
            return {"PreFilter": Status(st.code, plugin_reason(st))}
        if pre is not None and not pre.all_nodes() and target not in (pre.node_names or ()):
            return {"PreFilter": Status.unresolvable("the node is not among the nodes PreFilter allows")}
        target_ni = clones.get(target) or self.cs.by_name[target]
        return filter_verdicts(self.fwk, state, pod, target_ni)

    def check(self, change: Change, node: str) -> bool:
        """Apply ``change`` alone to copies and run PreFilter and Filter again: does its plugin pass now?"""
        verdict = self.verdicts([change], node)
        change.checked = True
        blocked = {p: st for p, st in failing(verdict).items() if p not in self.fwk.filter_names}
        st = verdict.get(change.plugin)
        change.flips = passes(st) and not blocked
        if st is not None and not passes(st):
            change.after = reason(st)
        elif blocked:
            change.after = "; ".join(f"{p}: {reason(b)}" for p, b in blocked.items())
        else:
            change.after = ""
        return change.flips
