"""The batched Filter: the common plugins' verdicts as boolean arrays over every node at once, then the
same examined window as the sequential loop (upstream ``findNodesThatPassFilters``: from the rotating
start index, until ``numFeasibleNodesToFind`` nodes passed).

Vectorised forms of the same rules, never second semantics:

- NodeResourcesFit: ``fitsRequest`` over the node columns (pod count, cpu, memory, ephemeral storage);
  a pod with extended or hugepage requests goes the per-node way.
- NodeUnschedulable, NodeName, TaintToleration, NodeAffinity: their verdict depends only on the node
  object and what the plugin reads from the pod, so the mask is computed once per pod shape by the
  plugin's own ``filter`` on every node and cached (``NodeColumns.masks``).

A node a mask rejects gets its status from the full per-node Filter run (the message users see is the
reference's); should that run pass, or fail with an error, the whole cycle falls back to the per-node
loop, so a wrong mask can cost time, never a decision. Plugins without a vectorised form run per node
on the nodes the masks let through, in the window's order.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import NodeToStatus
from pysched.framework.runtime import Framework, plugin_fault
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_STATE_KEY
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import ROWS_KEY, NodeColumns, columns_for
from pysched.snapshot.nodeinfo import NodeInfo

MIN_NODES = 64  # below this the per-node loop is as fast
_REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable)


def _selector_sig(sel: object) -> object:
    if sel is None:
        return None
    return tuple((t.expressions, t.fields, t.valid) for t in sel.terms)  # type: ignore[attr-defined]


# What each shape-only plugin reads from the pod (a cache key: a miss costs time, a false hit would be a
# bug, so every field the plugin reads is in it).
_SHAPE: dict[str, Callable[[Pod], object]] = {
    "NodeUnschedulable": lambda pod: repr(pod.tolerations),
    "TaintToleration": lambda pod: repr(pod.tolerations),
    "NodeName": lambda pod: pod.node_name or "",
    "NodeAffinity": lambda pod: repr((sorted((pod.node_selector or {}).items()), pod.node_selector is None,
                                      _selector_sig(pod.node_affinity_required))),
}


def _shape_mask(p: object, state: CycleState, pod: Pod, cols: NodeColumns, sig: object) -> np.ndarray | None:
    key = (id(p), sig)
    mask = cols.masks.get(key)
    if mask is None:
        if key not in cols.seen:  # a shape seen once runs per node on the window: a mask over every
            cols.seen.add(key)  # node pays off only for shapes that come back
            return None
        if len(cols.masks) > 4096:
            cols.masks.clear()
            cols.seen.clear()
        f = p.filter  # type: ignore[attr-defined]
        try:
            mask = np.fromiter(((st := f(state, pod, ni)) is None or st.code == Code.Success for ni in cols.infos),
                               dtype=bool, count=cols.n)
        except Exception:
            return None
        cols.masks[key] = mask
    return mask


def _fit_mask(p: object, state: CycleState, cols: NodeColumns) -> np.ndarray | None:
    req = state.read(FIT_STATE_KEY)
    if req is None or any(q for q in req.scalar.values()):
        return None
    ok = cols.num_pods + 1 <= cols.alloc_pods
    if req.milli_cpu > 0:
        ok &= req.milli_cpu <= cols.alloc_cpu - cols.req_cpu
    if req.memory > 0:
        ok &= req.memory <= cols.alloc_mem - cols.req_mem
    if req.ephemeral_storage > 0:
        ok &= req.ephemeral_storage <= cols.alloc_eph - cols.req_eph
    return ok


def _mask(p: object, state: CycleState, pod: Pod, cols: NodeColumns) -> np.ndarray | None:
    name = p.name  # type: ignore[attr-defined]
    if name == "NodeResourcesFit" and type(p).__module__ == "pysched.plugins.noderesources.fit":
        return _fit_mask(p, state, cols)
    shape = _SHAPE.get(name)
    if shape is not None and type(p).__module__.startswith("pysched.plugins."):
        return _shape_mask(p, state, pod, cols, shape(pod))
    return None


def _run_subset(plugins: list, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
    """``Framework.run_filter`` restricted to ``plugins`` (the ones without a mask)."""
    for p in plugins:
        try:
            st = p.filter(state, pod, node)
        except Exception as exc:
            return plugin_fault(p.name, "Filter", pod, exc, node.name)
        if st is not None and st.code != Code.Success:
            if st.code not in _REJECTED:
                return Status(Code.Error, error=f'running "{p.name}" filter plugin: {st.message()}'
                              ).with_plugin(p.name)
            st.plugin = p.name
            return st
    return None


def find_feasible(fwk: Framework, cluster: ClusterState, state: CycleState, pod: Pod, statuses: NodeToStatus,
                  start: int, to_find: int) -> list[NodeInfo] | None:
    """The feasible nodes of the window over every node, the rejected ones' statuses set in window order;
    None when the per-node loop must decide (then nothing was set)."""
    nodes = cluster.node_infos
    n = len(nodes)
    if n < MIN_NODES:
        return None
    cols = columns_for(cluster)
    skip = state.skip_filter_plugins
    mask = np.ones(n, dtype=bool)
    rest = []
    for p in fwk.filter:
        if p.name in skip:
            continue
        m = _mask(p, state, pod, cols)
        if m is None:
            rest.append(p)
        else:
            mask &= m
    if not rest and len(fwk.filter) == len(skip):
        return None
    order = np.arange(start, start + n, dtype=np.int64)
    order[n - start:] -= n
    passed = mask[order]
    rejected: list[tuple[NodeInfo, Status]] = []
    feasible: list[NodeInfo] = []
    if not rest:
        hits = np.flatnonzero(passed)
        if len(hits) > to_find:  # as the cycle: the window ends before the next feasible node after the count
            window = order[:hits[to_find]]
            window_passed = passed[:hits[to_find]]
            hits = hits[:to_find]
        else:
            window, window_passed = order, passed
        rows = order[hits]
        for i in window[~window_passed].tolist():
            ni = nodes[i]
            st = fwk.run_filter(state, pod, ni)
            if st is None or st.code not in _REJECTED:
                return None  # the mask and the reference disagree, or an error: the per-node loop decides
            rejected.append((ni, st))
        feasible = [nodes[i] for i in rows.tolist()]
    else:
        kept = []
        for i, ok in zip(order.tolist(), passed.tolist(), strict=True):
            ni = nodes[i]
            if ok:
                st = _run_subset(rest, state, pod, ni)
                if st is None:
                    if len(feasible) >= to_find:
                        break  # as the cycle: stop on the next feasible node after the count, not kept
                    feasible.append(ni)
                    kept.append(i)
                    continue
                if st.code not in _REJECTED:
                    return None
            else:
                st = fwk.run_filter(state, pod, ni)
                if st is None or st.code not in _REJECTED:
                    return None
            rejected.append((ni, st))
        rows = np.array(kept, dtype=np.int64)
    for ni, st in rejected:
        statuses.set(ni.name, st)
    state.write(ROWS_KEY, (feasible, rows, cols))
    return feasible
