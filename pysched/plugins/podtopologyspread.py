"""PodTopologySpread: hard (DoNotSchedule) spread constraints filter, soft (ScheduleAnyway) ones score.

Behaviour follows kube-scheduler v1.34 (reference §10):

* the pod's own ``topologySpreadConstraints`` are used when it has any; otherwise the default
  constraints (``System``: hostname maxSkew 3 + zone maxSkew 5, both ScheduleAnyway; ``List``: the
  configured ones) with a selector derived from the Services / RC / RS / STS selecting the pod;
* PreFilter counts the matching pods per topology domain over all nodes once per cycle; Filter is
  O(constraints) per node;
* PreScore counts per domain over all nodes for the domains the feasible nodes span; Score adds
  ``count * ln(size + 2) + maxSkew - 1`` per constraint; NormalizeScore inverts and scales.

Per-node match counts are memoised across cycles (keyed by selector and namespace, invalidated by the
NodeInfo's generation), so consecutive pods of one workload cost O(nodes), not O(pods).
"""

from __future__ import annotations

import json
import math
import struct
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from pysched.errors import ConfigError
from pysched.framework.batch import BatchVerdict, template_statuses
from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import (
    MAX_NODE_SCORE,
    FilterPlugin,
    Handle,
    NodeScore,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from pysched.framework.status import PRE_FILTER_SKIP, PRE_SCORE_SKIP, Code, Status
from pysched.framework.whatif import SPREAD, Change, Eviction, WhatIfContext, WhatIfPlugin, selector_text
from pysched.lazyclass import dataclass
from pysched.model.labels import LabelSelector, Requirement
from pysched.model.objects import FieldError, Pod, SpreadConstraint
from pysched.plugins.helper import (
    decode_plugin_args,
    find_untolerated_taint,
    go_round as round_half_away,  # Go's math.Round, one implementation
    pod_matches_node_selector_and_affinity,
)
from pysched.plugins.topology_arrays import (
    Domains,
    TopologyArrays,
    count_matching,
    go_round_nonnegative,
    topology_arrays,
)
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import NodeColumns, columns_for, feasible_rows
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "PodTopologySpread"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME
IGNORED_KEY = PRE_SCORE_STATE_KEY + "/ignored"  # batched: the scored nodes' ignored flags, for normalization

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

MAX_INT32 = 2**31 - 1
_INVALID_SCORE = -1

SYSTEM_DEFAULT_CONSTRAINTS: tuple[SpreadConstraint, ...] = (
    SpreadConstraint(max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY,
                     selector=LabelSelector(), min_domains=None, node_affinity_policy=None,
                     node_taints_policy=None, match_label_keys=[]),
    SpreadConstraint(max_skew=5, topology_key=LABEL_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY,
                     selector=LabelSelector(), min_domains=None, node_affinity_policy=None,
                     node_taints_policy=None, match_label_keys=[]),
)


# --------------------------------------------------------------------------- shared helpers

def selector_key(sel: LabelSelector) -> Hashable:
    """A structural, hashable identity for a selector (LabelSelector hashes by object identity)."""
    return (sel.nothing, sel.requirements)


class NodeValueCache:
    """Memoises a value computed from a NodeInfo's pods, per (key, NodeInfo object, generation).

    Holding the NodeInfo itself in the entry keeps its ``id`` from being reused; a NodeInfo changes
    its generation on every add/remove of a pod, which invalidates the entry. Clones are distinct
    objects, so they never see the original's entries. Least recently used keys are evicted.
    """

    __slots__ = ("_data", "_max_keys")

    def __init__(self, max_keys: int = 32) -> None:
        self._data: OrderedDict[Hashable, dict[int, tuple[NodeInfo, int, Any]]] = OrderedDict()
        self._max_keys = max_keys

    def table(self, key: Hashable) -> dict[int, tuple[NodeInfo, int, Any]]:
        per = self._data.get(key)
        if per is None:
            per = {}
            self._data[key] = per
            if len(self._data) > self._max_keys:
                self._data.popitem(last=False)
        else:
            self._data.move_to_end(key)
        return per

    @staticmethod
    def lookup(per: dict[int, tuple[NodeInfo, int, Any]], ni: NodeInfo, compute: Callable[[NodeInfo], Any]) -> Any:
        ent = per.get(id(ni))
        if ent is not None and ent[0] is ni and ent[1] == ni.generation:
            return ent[2]
        v = compute(ni)
        per[id(ni)] = (ni, ni.generation, v)
        return v

    def clear(self) -> None:
        self._data.clear()


# Coefficients of the FreeBSD ``e_log.c`` algorithm that Go's ``math.Log`` implements (also in its amd64
# assembly). Go's result differs from the C library's ``log`` in the last bit for some integers (ln 3
# among them), and that bit can flip a half-away rounding, so the weights use this port.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_HALF_SQRT2 = 7.07106781186547524401e-01


def go_log(x: float) -> float:
    """Go's ``math.Log`` bit for bit (finite x > 0; normal numbers)."""
    if x <= 0.0 or math.isnan(x) or math.isinf(x) or x < 2.2250738585072014e-308:
        return math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    frac = struct.unpack("<d", struct.pack("<Q", (bits & 0x000FFFFFFFFFFFFF) | 0x3FE0000000000000))[0]
    k = float(((bits >> 52) & 0x7FF) - 0x3FE)
    if not _HALF_SQRT2 < frac:  # the amd64 assembly's comparison (the Go source's `<` differs only at equality)
        frac *= 2.0
        k -= 1.0
    f = frac - 1.0
    s = f / (2.0 + f)
    s2 = s * s
    s4 = s2 * s2
    t1 = s2 * (_LG1 + s4 * (_LG3 + s4 * (_LG5 + s4 * _LG7)))
    t2 = s4 * (_LG2 + s4 * (_LG4 + s4 * _LG6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


# --------------------------------------------------------------------------- constraints

@dataclass(slots=True)
class Constraint:
    """Upstream's internal ``topologySpreadConstraint``: the selector is parsed and merged."""

    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    node_affinity_honor: bool
    node_taints_honor: bool


def merge_match_label_keys(selector: LabelSelector, keys: list[str], pod_labels: dict[str, str]) -> LabelSelector:
    """matchLabelKeys: ``key=value`` for every key the pod carries, ANDed with the original selector;
    a nil (nothing) selector stays nothing."""
    extra: dict[str, str] = {}
    for k in keys:
        if k in pod_labels:
            extra[k] = pod_labels[k]
    if not extra:
        return selector
    reqs = tuple(Requirement(k, "In", frozenset((v,))) for k, v in sorted(extra.items()))
    return selector.with_requirements(reqs)


def filter_constraints(constraints: list[SpreadConstraint] | tuple[SpreadConstraint, ...],
                       pod_labels: dict[str, str], action: str) -> list[Constraint]:
    out: list[Constraint] = []
    for c in constraints:
        if c.when_unsatisfiable != action:
            continue
        sel = c.selector
        if c.match_label_keys:
            sel = merge_match_label_keys(sel, c.match_label_keys, pod_labels)
        out.append(Constraint(
            max_skew=c.max_skew,
            topology_key=c.topology_key,
            selector=sel,
            min_domains=c.min_domains if c.min_domains is not None else 1,
            node_affinity_honor=(c.node_affinity_policy or HONOR) == HONOR,
            node_taints_honor=(c.node_taints_policy or IGNORE) == HONOR,
        ))
    return out


def node_has_all_keys(labels: dict[str, str], constraints: list[Constraint]) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


class _Eligibility:
    """nodeAffinityPolicy / nodeTaintsPolicy checks for one pod, evaluated lazily per node."""

    __slots__ = ("need_affinity", "need_taints", "pod")

    def __init__(self, pod: Pod, constraints: list[Constraint]) -> None:
        self.pod = pod
        affinity = taints = False
        for c in constraints:  # (a loop, not any() over generators: once per PreFilter)
            affinity = affinity or c.node_affinity_honor
            taints = taints or c.node_taints_honor
        self.need_affinity = affinity and (bool(pod.node_selector) or pod.node_affinity_required is not None)
        self.need_taints = taints

    def per_node(self, ni: NodeInfo) -> tuple[bool, bool]:
        """(matches the pod's required node affinity, has no untolerated NoSchedule/NoExecute taint)."""
        aff = True
        if self.need_affinity:
            aff = pod_matches_node_selector_and_affinity(self.pod, ni.node.labels, ni.name)
        taints = True
        if self.need_taints and ni.node.taints:
            taints = find_untolerated_taint(ni.node.taints, self.pod.tolerations) is None
        return aff, taints

    @staticmethod
    def ok(c: Constraint, verdict: tuple[bool, bool]) -> bool:
        if c.node_affinity_honor and not verdict[0]:
            return False
        if c.node_taints_honor and not verdict[1]:
            return False
        return True


# --------------------------------------------------------------------------- default selector

_RC_GVK = ("", "v1", "ReplicationController")
_RS_GVK = ("apps", "v1", "ReplicaSet")
_SS_GVK = ("apps", "v1", "StatefulSet")


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: "" → ("", ""), "v1" → ("", "v1"), "g/v" → ("g", "v"); else None."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


class _WorkloadIndex:
    """Services by namespace and controllers by (kind, namespace, name), built from the snapshot."""

    def __init__(self, workloads: dict[str, list]) -> None:
        self.source = workloads
        self.sizes = {k: len(v) for k, v in workloads.items()}
        self.services: dict[str, list] = {}
        for svc in workloads.get("Service", []):
            self.services.setdefault(svc.meta.namespace, []).append(svc)
        self.controllers: dict[tuple[str, str, str], Any] = {}
        for kind in ("ReplicationController", "ReplicaSet", "StatefulSet"):
            for w in workloads.get(kind, []):
                self.controllers.setdefault((kind, w.meta.namespace, w.meta.name), w)

    def stale(self, workloads: dict[str, list]) -> bool:
        """Whether ``workloads`` is another dict than the one indexed, or a kind was added, removed or
        changed its number of objects since (the sizes compared kind by kind, no dict built: asked on
        every PreFilter and PreScore without constraints of the pod's own)."""
        sizes = self.sizes
        if workloads is not self.source or len(workloads) != len(sizes):
            return True
        for k, v in workloads.items():
            if sizes.get(k) != len(v):
                return True
        return False


def default_selector(pod: Pod, index: _WorkloadIndex) -> LabelSelector:
    """Upstream ``helper.DefaultSelector``."""
    label_set: dict[str, str] = {}
    for svc in index.services.get(pod.namespace, ()):
        if svc.selector_map is None:  # a nil selector selects nothing
            continue
        if LabelSelector.from_map(svc.selector_map).matches(pod.labels):
            label_set.update(svc.selector_map)
    selector = LabelSelector.from_map(label_set)
    owner = pod.meta.controller_ref()
    if owner is None:
        return selector
    gv = _parse_group_version(str(owner.get("apiVersion") or ""))
    if gv is None:
        return selector
    gvk = (gv[0], gv[1], str(owner.get("kind") or ""))
    name = str(owner.get("name") or "")
    if gvk == _RC_GVK:
        rc = index.controllers.get(("ReplicationController", pod.namespace, name))
        if rc is not None:
            label_set.update(rc.selector_map or {})
            selector = LabelSelector.from_map(label_set)
    elif gvk in (_RS_GVK, _SS_GVK):
        w = index.controllers.get((gvk[2], pod.namespace, name))
        if w is not None and w.selector is not None and not w.selector.nothing:
            selector = LabelSelector(tuple(sorted(selector.requirements + w.selector.requirements,
                                                  key=lambda r: r.key)))
    return selector


# --------------------------------------------------------------------------- cycle state

class CriticalPaths:
    """The two smallest (topology value, match count) pairs, maintained as upstream does."""

    __slots__ = ("n0", "n1", "v0", "v1")

    def __init__(self) -> None:
        self.v0, self.n0 = "", MAX_INT32
        self.v1, self.n1 = "", MAX_INT32

    def update(self, value: str, num: int) -> None:
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        else:
            if num < self.n0:
                self.v1, self.n1 = self.v0, self.n0
                self.v0, self.n0 = value, num
            elif num < self.n1:
                self.v1, self.n1 = value, num
            return
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def copy(self) -> CriticalPaths:
        c = CriticalPaths.__new__(CriticalPaths)
        c.v0, c.n0, c.v1, c.n1 = self.v0, self.n0, self.v1, self.n1
        return c

    def __repr__(self) -> str:
        return f"CriticalPaths(({self.v0!r}, {self.n0}), ({self.v1!r}, {self.n1}))"


_MAX_DOMAIN_ENTRIES = 64


class _DomainCounts:
    """Cluster-wide matching-pod counts per topology domain for one (constraints, namespace, pod
    eligibility) combination, kept across cycles: after a bind or an eviction only the nodes named
    in ``ClusterState.change_log`` since the last use are recounted (upstream recounts every node
    every cycle; the numbers are the same)."""

    __slots__ = ("contrib", "tp", "version")

    def __init__(self, n: int) -> None:
        self.version = 0
        self.tp: list[dict[str, int]] = [{} for _ in range(n)]
        self.contrib: dict[str, list[tuple[int, str, int]] | None] = {}

    def apply(self, name: str, entries: list[tuple[int, str, int]] | None) -> None:
        old = self.contrib.get(name)
        if old:
            for i, value, cnt in old:
                self.tp[i][value] -= cnt
        if entries:
            for i, value, cnt in entries:
                m = self.tp[i]
                m[value] = m.get(value, 0) + cnt
        self.contrib[name] = entries


def _spread_status(kind: int) -> Status:
    if kind == 1:
        return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
    return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)


def _eligibility_signature(pod: Pod, elig: _Eligibility) -> Hashable:
    """What the node-inclusion policies read of the pod, as a hashable value."""
    aff: Hashable = None
    if elig.need_affinity:
        spec = pod.raw.get("spec") if isinstance(pod.raw, dict) else None
        na = ((spec or {}).get("affinity") or {}).get("nodeAffinity") or {}
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        aff = (tuple(sorted((pod.node_selector or {}).items())),
               json.dumps(required, sort_keys=True, default=str))
    taints: Hashable = pod.tolerations if elig.need_taints else None
    return aff, taints


# (the constraints list, the arrays it was made on, the constraints' keys, whether some constraint honours
# nodeAffinityPolicy, nodeTaintsPolicy, per constraint (it, its domains, its selector's key or None when the
# selector counts nothing, ``spread_rows`` of its key))
_PreFilterPlan = tuple[list[Constraint], TopologyArrays, tuple[str, ...], bool, bool,
                       list[tuple[Constraint, Domains, Hashable | None, tuple[np.ndarray, np.ndarray, np.ndarray, int]]]]

_MAX_VERDICTS = 256
_MAX_FILTERED = 1024


def _spread_reasons(tables: list[tuple[Domains, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Per node row, the first failing constraint's reason (int8: 0 passes, 1 missing label, 2 skew) and
    the mask of the rows that pass (both read only), from each constraint's domains and its reason per
    domain code (``bytes``: 2 skew, 0 passes; rows without the key get 1)."""
    reason: np.ndarray | None = None
    for d, over in tables:
        table = np.frombuffer(over + b"\x01", dtype=np.int8)
        r = table[d.ext]  # (a new array: an index array picks)
        if reason is None:
            reason = r
        else:
            np.copyto(reason, r, where=reason == 0)
    assert reason is not None
    ok = reason == 0
    reason.flags.writeable = False
    ok.flags.writeable = False
    return reason, ok


class SpreadArrays:
    """One hard constraint's PreFilter counts as arrays (batched path): matching pods per domain of its
    topology key over the eligible nodes that carry every constraint's key."""

    __slots__ = ("domains", "eligible", "min_count", "n_present", "present", "tp")

    def __init__(self, domains: Domains, eligible: np.ndarray, tp: list[int] | np.ndarray, present: np.ndarray,
                 n_present: int | None = None, min_count: int | None = None) -> None:
        self.domains = domains
        self.eligible = eligible  # bool per node row: counted (has every key, passes the policies)
        self.present = present  # bool per domain code: the domain is in the map (an eligible node has it)
        self.n_present = int(np.count_nonzero(present)) if n_present is None else n_present
        if self.n_present and min_count is not None:  # the smallest count over the present domains, given
            self.min_count = min_count
        elif self.n_present:
            kept = np.asarray(tp)[present]
            self.min_count = int(kept[kept.argmin()])  # argmin: less call overhead than a min reduction
        else:
            self.min_count = MAX_INT32
        # per domain code: matching pods (0 for domains without an eligible node), a list (read item by item
        # or as a whole by Filter: the kept counts arrive as one, no array made and listed again)
        self.tp: list[int] = tp if isinstance(tp, list) else tp.tolist()

    def to_dict(self) -> dict[str, int]:
        """The map as the per-node path builds it: domains in order of their first eligible node."""
        rows = np.flatnonzero(self.eligible)
        if not len(rows):
            return {}
        uniq, first = np.unique(self.domains.codes[rows], return_index=True)
        values, tp = self.domains.values, self.tp
        return {values[c]: int(tp[c]) for c in uniq[np.argsort(first, kind="stable")].tolist()}


class PreFilterState(StateData):
    """PreFilter's counts per constraint. On the batched path they are arrays (``arrays``) and the maps
    and critical paths are built only when something reads them; AddPod/RemovePod (preemption, nominated
    pods) work on the maps and drop the arrays."""

    __slots__ = ("_borrowed", "_origin", "_paths", "_tp", "arrays", "constraints")

    def __init__(self, constraints: list[Constraint] | None = None, critical_paths: list[CriticalPaths] | None = None,
                 tp_value_to_match_num: list[dict[str, int]] | None = None,
                 arrays: list[SpreadArrays] | None = None) -> None:
        self.constraints = constraints if constraints is not None else []
        self._paths = critical_paths
        self._tp = tp_value_to_match_num
        self.arrays = arrays
        # per map of ``_tp``: True while it is still the map of the state this one was cloned from
        self._borrowed: list[bool] | None = None
        # a clone taken before the maps were built: the state it was cloned from, whose maps it borrows
        # when it needs maps, if that state has not been written since (it still has the same arrays)
        self._origin: PreFilterState | None = None

    def _materialize(self) -> None:
        if self._tp is None:
            assert self.arrays is not None
            o, self._origin = self._origin, None
            if o is not None and o.arrays is self.arrays:
                o._materialize()
                self._borrow(o)
                return
            self._tp = [a.to_dict() for a in self.arrays]
            paths = []
            for m in self._tp:
                p = CriticalPaths()
                for value, num in m.items():
                    p.update(value, num)
                paths.append(p)
            self._paths = paths

    @property
    def tp_value_to_match_num(self) -> list[dict[str, int]]:
        self._materialize()
        assert self._tp is not None
        return self._tp

    @property
    def critical_paths(self) -> list[CriticalPaths]:
        self._materialize()
        assert self._paths is not None
        return self._paths

    def min_match_num(self, i: int, min_domains: int) -> int:
        if self._tp is None and self.arrays is not None:
            a = self.arrays[i]
            return 0 if a.n_present < min_domains else a.min_count
        if len(self.tp_value_to_match_num[i]) < min_domains:
            return 0
        return self.critical_paths[i].n0

    def match_num(self, i: int, value: str) -> int:
        if self._tp is None and self.arrays is not None:
            a = self.arrays[i]
            code = a.domains.index.get(value)
            return 0 if code is None else a.tp[code]
        return self.tp_value_to_match_num[i].get(value, 0)

    def mutable(self) -> PreFilterState:
        """Before AddPod/RemovePod change the maps: the arrays no longer describe them."""
        self._materialize()
        self.arrays = None
        return self

    def writable_map(self, i: int) -> dict[str, int]:
        """The map of constraint ``i``, copied first when it is still the original's."""
        tp = self.tp_value_to_match_num
        borrowed = self._borrowed
        if borrowed is not None and borrowed[i]:
            tp[i] = dict(tp[i])
            borrowed[i] = False
        return tp[i]

    def _borrow(self, o: PreFilterState) -> None:
        """Take ``o``'s (built) maps, shared both ways until one side writes (whichever writes first
        copies), and copies of its critical paths."""
        tp = o.tp_value_to_match_num
        self._tp = list(tp)
        self._paths = [p.copy() for p in o.critical_paths]
        self._borrowed = [True] * len(tp)
        o._borrowed = [True] * len(tp)

    def clone(self) -> PreFilterState:
        c = PreFilterState(self.constraints, None, None, self.arrays)
        if self._tp is None:
            # Maps not built yet: the clone reads the (never written) arrays and borrows this state's maps
            # only when it needs maps (nominated pods that no constraint counts need none).
            c._origin = self
            return c
        # A clone shares the maps until AddPod/RemovePod writes to one (preemption clones the state per
        # candidate node, and most dry runs change no map: a hostname map has a key per node).
        c._borrow(self)
        return c

    def __repr__(self) -> str:
        return f"PreFilterState(constraints={self.constraints!r})"


class PreScoreState(StateData):
    """PreScore's counts. On the batched path (``rows`` set) the per-node maps are built only when
    something reads them."""

    __slots__ = ("_counts", "_ignored", "arrays", "constraints", "rows", "topology_normalizing_weight")

    def __init__(self, constraints: list[Constraint] | None = None, ignored_nodes: set[str] | None = None,
                 topology_value_to_pod_counts: list[dict[str, int]] | None = None,
                 topology_normalizing_weight: list[float] | None = None) -> None:
        self.constraints = constraints if constraints is not None else []
        self._ignored: set[str] = ignored_nodes if ignored_nodes is not None else set()
        self._counts: list[dict[str, int]] | None = topology_value_to_pod_counts or []
        self.topology_normalizing_weight: list[float] = topology_normalizing_weight or []
        self.rows: np.ndarray | None = None  # batched: the rows PreScore saw, their ignored flags, and
        # per constraint (domains, counts per code with absent domains 0 or None for hostname, codes)
        self.arrays: tuple[np.ndarray, list[tuple[Domains, np.ndarray | None]]] | None = None

    @property
    def ignored_nodes(self) -> set[str]:
        return self._ignored

    @property
    def topology_value_to_pod_counts(self) -> list[dict[str, int]]:
        if self._counts is None:
            assert self.arrays is not None
            out = []
            for d, counts in self.arrays[1]:
                m: dict[str, int] = {}
                if counts is not None:
                    values = d.values
                    for code in np.flatnonzero(counts >= 0).tolist():
                        m[values[code] if code < len(values) else ""] = int(counts[code])
                out.append(m)
            self._counts = out
        return self._counts

    @topology_value_to_pod_counts.setter
    def topology_value_to_pod_counts(self, value: list[dict[str, int]]) -> None:
        self._counts = value

    def clone(self) -> PreScoreState:
        return self  # never mutated after PreScore


# --------------------------------------------------------------------------- args

def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)



# --------------------------------------------------------------------------- plugin

class PodTopologySpread(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, WhatIfPlugin):
    NAME = NAME
    HAS_EXTENSIONS = True
    HAS_NORMALIZE = True

    def __init__(self, handle: Handle | None, args: Any = None) -> None:
        if args is None:
            args = decode_args(None)
        self.handle = handle
        defaulting = getattr(args, "defaulting_type", SYSTEM_DEFAULTING) or SYSTEM_DEFAULTING
        self.system_defaulted = defaulting == SYSTEM_DEFAULTING
        if self.system_defaulted:
            self.default_constraints: tuple[SpreadConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
        else:
            parsed = []
            for i, raw in enumerate(getattr(args, "default_constraints", None) or []):
                if isinstance(raw, SpreadConstraint):
                    parsed.append(raw)
                    continue
                try:
                    parsed.append(SpreadConstraint.parse(raw, f"defaultConstraints[{i}]"))
                except FieldError as e:
                    raise ConfigError(e.message, field=f"args.{e.path}") from None
            self.default_constraints = tuple(parsed)
        self._counts = NodeValueCache()
        self._domains: OrderedDict[Hashable, _DomainCounts] = OrderedDict()
        self._workload_index: _WorkloadIndex | None = None
        # batch_filter's (rows' reasons, mask) per constraints' (domains, reason table), see _spread_reasons
        # and the BatchVerdict made of them, whose Status objects are built at the first ask and shared
        # (framework/batch.py: callers set nothing on them but ``plugin``)
        self._verdicts: OrderedDict[tuple[tuple[Domains, bytes], ...], BatchVerdict] = OrderedDict()
        # action -> (the default constraints it was made from, those with that whenUnsatisfiable)
        self._defaults_by_action: dict[str, tuple[tuple[SpreadConstraint, ...], tuple[SpreadConstraint, ...]]] = {}
        # (id of a pod's spread constraints list, action) -> (that list, filter_constraints of it) when no
        # constraint has matchLabelKeys (see get_constraints)
        self._filtered: dict[tuple[int, str], tuple[Any, list[Constraint]]] = {}
        # id of a constraints list -> what PreFilter's arrays read of it (see _pre_filter_plan)
        self._plans: dict[int, _PreFilterPlan] = {}

    def _cross_cycle(self) -> bool:
        """Whether counts may be kept across cycles (the fast path); the reference path
        (``Handle.batched`` off) computes everything from the cluster as it stands."""
        return self.handle is None or self.handle.batched

    # ------------------------------------------------------------------ constraints
    def _workloads(self) -> _WorkloadIndex:
        workloads: dict[str, list] = {}
        if self.handle is not None:
            workloads = self.handle.snapshot.cluster.workloads
        idx = self._workload_index
        if not self._cross_cycle():
            return _WorkloadIndex(workloads)
        if idx is None or idx.stale(workloads):
            idx = _WorkloadIndex(workloads)
            self._workload_index = idx
        return idx

    def build_default_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        # both steps are pure: the cheap refusals first (the system defaults are all ScheduleAnyway, so
        # PreFilter's call ends at the first test; PreScore's at the second when no Service is in the pod's
        # namespace and no controller could be its owner, where the default selector is empty)
        defaults = self._defaults_by_action.get(action)
        if defaults is None or defaults[0] is not self.default_constraints:
            defaults = self._defaults_by_action[action] = (
                self.default_constraints, tuple(c for c in self.default_constraints if c.when_unsatisfiable == action))
        if not defaults[1]:
            return []
        handle = self.handle
        index = self._workload_index
        if index is None or handle is None or not handle.batched or index.stale(handle.snapshot.cluster.workloads):
            index = self._workloads()  # (else the kept index, as _workloads would return it)
        if not index.services.get(pod.namespace) and (not index.controllers or pod.meta.controller_ref() is None):
            return []
        selector = default_selector(pod, index)
        if selector.empty:
            return []
        constraints = filter_constraints(defaults[1], pod.labels, action)
        for c in constraints:
            c.selector = selector
        return constraints

    def get_constraints(self, pod: Pod, action: str) -> list[Constraint]:
        spread = pod.spread_constraints
        if spread:
            hit = self._filtered.get((id(spread), action))
            if hit is not None and hit[0] is spread:
                return hit[1]
            out = filter_constraints(spread, pod.labels, action)
            for c in spread:
                if c.match_label_keys:
                    return out  # (merged with the pod's labels: this pod's own)
            # the pod's labels play no part: the same constraints for every pod parsed from this spec (they
            # share the list), kept (nobody changes a constraint once made)
            if len(self._filtered) >= _MAX_FILTERED:
                self._filtered.clear()
            self._filtered[(id(spread), action)] = (spread, out)
            return out
        return self.build_default_constraints(pod, action)

    def _count(self, ni: NodeInfo, selector: LabelSelector, namespace: str,
               table: dict[int, tuple[NodeInfo, int, Any]] | None) -> int:
        if table is None:
            return count_matching(ni.pods, selector, namespace)
        ent = table.get(id(ni))
        if ent is not None and ent[0] is ni and ent[1] == ni.generation:
            return ent[2]
        v = count_matching(ni.pods, selector, namespace)
        table[id(ni)] = (ni, ni.generation, v)
        return v

    def _table(self, c: Constraint, namespace: str) -> dict[int, tuple[NodeInfo, int, Any]] | None:
        if c.selector.empty or c.selector.nothing or not self._cross_cycle():
            return None  # counts are 0 without looking at pods; or counted afresh on the reference path
        return self._counts.table((selector_key(c.selector), namespace))

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.spread_constraints:
            # (``build_default_constraints``' first test without the two calls: the kept default constraints
            # for DoNotSchedule, none for the system defaults)
            defaults = self._defaults_by_action.get(DO_NOT_SCHEDULE)
            if defaults is not None and not defaults[1] and defaults[0] is self.default_constraints:
                return None, PRE_FILTER_SKIP
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        if not constraints:
            return None, PRE_FILTER_SKIP
        s = self.compute_pre_filter_state(pod, constraints, nodes)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _domain_counts(self, pod: Pod, constraints: list[Constraint], require_all: bool,
                       skip_host: bool) -> list[dict[str, int]] | None:
        """Matching pods per domain over every node of the cluster (None without a cluster)."""
        if self.handle is None:
            return None
        cluster = self.handle.snapshot
        elig = _Eligibility(pod, constraints)
        ns = pod.namespace
        key = (require_all, skip_host, ns, _eligibility_signature(pod, elig),
               tuple((c.topology_key, selector_key(c.selector), c.node_affinity_honor, c.node_taints_honor)
                     for c in constraints))
        entry = self._domains.get(key)
        log = cluster.change_log
        if entry is not None:  # the log only grows: an entry is at most as new as it
            self._domains.move_to_end(key)
            if entry.version < len(log):
                for name in set(log[entry.version:]):
                    ni = cluster.by_name.get(name)
                    entry.apply(name, self._contribution(ni, pod, constraints, elig, require_all, skip_host)
                                if ni is not None else None)
                entry.version = len(log)
            return entry.tp
        entry = _DomainCounts(len(constraints))
        for ni in cluster.node_infos:
            entry.apply(ni.name, self._contribution(ni, pod, constraints, elig, require_all, skip_host))
        entry.version = len(log)
        self._domains[key] = entry
        if len(self._domains) > _MAX_DOMAIN_ENTRIES:
            self._domains.popitem(last=False)
        return entry.tp

    def _contribution(self, ni: NodeInfo, pod: Pod, constraints: list[Constraint], elig: _Eligibility,
                      require_all: bool, skip_host: bool) -> list[tuple[int, str, int]] | None:
        labels = ni.node.labels
        if require_all and not node_has_all_keys(labels, constraints):
            return None
        verdict = None
        out = []
        for i, c in enumerate(constraints):
            key = c.topology_key
            if skip_host and key == LABEL_HOSTNAME:
                continue
            if verdict is None:
                verdict = elig.per_node(ni)
            if not _Eligibility.ok(c, verdict):
                continue
            value = labels[key] if require_all else labels.get(key, "")
            zero = c.selector.empty or c.selector.nothing
            cnt = 0 if zero else self._count(ni, c.selector, pod.namespace, self._table(c, pod.namespace))
            out.append((i, value, cnt))
        return out

    def compute_pre_filter_state(self, pod: Pod, constraints: list[Constraint],
                                 nodes: list[NodeInfo]) -> PreFilterState:
        if self.handle is not None and self.handle.batched and nodes is self.handle.snapshot.node_infos:
            return self._pre_filter_arrays(pod, constraints)
        n = len(constraints)
        tp: list[dict[str, int]] = [{} for _ in range(n)]
        elig = _Eligibility(pod, constraints)
        ns = pod.namespace
        tables = [self._table(c, ns) for c in constraints]
        zero = [c.selector.empty or c.selector.nothing for c in constraints]
        for ni in nodes:
            labels = ni.node.labels
            if not node_has_all_keys(labels, constraints):
                continue
            verdict = elig.per_node(ni)
            for i, c in enumerate(constraints):
                if not _Eligibility.ok(c, verdict):
                    continue
                value = labels[c.topology_key]
                cnt = 0 if zero[i] else self._count(ni, c.selector, ns, tables[i])
                m = tp[i]
                m[value] = m.get(value, 0) + cnt
        paths = []
        for i in range(n):
            p = CriticalPaths()
            for value, num in tp[i].items():
                p.update(value, num)
            paths.append(p)
        return PreFilterState(constraints, paths, tp)

    # ------------------------------------------------------------------ array forms (batched path)
    def _arrays(self) -> tuple[ClusterState, TopologyArrays]:
        cluster = self.handle.snapshot  # type: ignore[union-attr]
        return cluster, topology_arrays(columns_for(cluster))

    def _eligible_masks(self, topo: TopologyArrays, pod: Pod, elig: _Eligibility,
                        c: Constraint) -> np.ndarray | None:
        """nodeAffinityPolicy / nodeTaintsPolicy of ``c`` as one mask over the node rows (None: every node)."""
        mask = None
        if elig.need_affinity and c.node_affinity_honor:
            mask = topo.required_affinity_mask(pod)
        if elig.need_taints and c.node_taints_honor:
            taints = topo.tolerated_mask(pod.tolerations)
            mask = taints if mask is None else mask & taints
        return mask

    def _pre_filter_plan(self, constraints: list[Constraint], topo: TopologyArrays) -> _PreFilterPlan:
        """What ``_pre_filter_arrays`` reads of ``constraints`` on ``topo`` whatever the pod, kept per
        constraints list (the pods of one spec share it, see ``get_constraints``): whether a policy may
        narrow the counted nodes, and per constraint its domains, selector key, whether its selector
        counts nothing, and the rows with every key (``spread_rows``)."""
        keys = tuple([c.topology_key for c in constraints])
        affinity = taints = False
        steps = []
        for c in constraints:
            affinity = affinity or c.node_affinity_honor
            taints = taints or c.node_taints_honor
            zero = c.selector.empty or c.selector.nothing
            steps.append((c, topo.domains(c.topology_key), None if zero else selector_key(c.selector),
                          topo.spread_rows(keys, c.topology_key)))
        plan = (constraints, topo, keys, affinity, taints, steps)
        if len(self._plans) >= _MAX_FILTERED:
            self._plans.clear()
        self._plans[id(constraints)] = plan
        return plan

    def _pre_filter_arrays(self, pod: Pod, constraints: list[Constraint]) -> PreFilterState:
        cluster, topo = self._arrays()
        plan = self._plans.get(id(constraints))
        if plan is None or plan[0] is not constraints or plan[1] is not topo:
            plan = self._pre_filter_plan(constraints, topo)
        _, _, keys, affinity, taints, steps = plan
        if not taints and not (affinity and (pod.node_selector or pod.node_affinity_required is not None)):
            # no policy narrows the counted nodes (``_Eligibility`` asks nothing of them): the rows with
            # every key and the counts kept per domain, as below
            ns = pod.namespace
            arrays = []
            for c, d, sel_key, (rows, _, held, n_held) in steps:
                if sel_key is None:
                    arrays.append(SpreadArrays(d, rows, [0] * d.size, held, n_held))
                    continue
                counts, least = topo.spread_counts(cluster, c.selector, ns, sel_key, keys, c.topology_key)
                # (a copy: the kept list moves on with later cycles)
                arrays.append(SpreadArrays(d, rows, counts[:], held, n_held, least))
            return PreFilterState(constraints, None, None, arrays)
        elig = _Eligibility(pod, constraints)
        arrays = []
        for c in constraints:
            d = topo.domains(c.topology_key)
            extra = self._eligible_masks(topo, pod, elig, c)
            if extra is None:  # the nodes with every key: the same rows on every cycle
                m, codes, present, n_present = topo.spread_rows(keys, c.topology_key)
                if not (c.selector.empty or c.selector.nothing):
                    # the counts per domain kept across cycles (the same sums as the bincount below)
                    counts, least = topo.spread_counts(cluster, c.selector, pod.namespace, selector_key(c.selector),
                                                       keys, c.topology_key)
                    arrays.append(SpreadArrays(d, m, counts[:], present, n_present, least))
                    continue
            else:
                m = topo.spread_rows(keys, c.topology_key)[0] & extra
                codes = d.codes[m]
                present = np.bincount(codes, minlength=d.size) > 0
                n_present = None
            if c.selector.empty or c.selector.nothing:
                tp = np.zeros(d.size, dtype=np.int64)
            else:
                cnt = topo.match_counts(cluster, c.selector, pod.namespace, selector_key(c.selector))
                tp = np.bincount(codes, weights=cnt[m], minlength=d.size).astype(np.int64)
            arrays.append(SpreadArrays(d, m, tp, present, n_present))
        return PreFilterState(constraints, None, None, arrays)

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        """``filter`` on every node row at once, from PreFilter's arrays."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState) or s.arrays is None or not s.constraints:
            return None
        arrays = s.arrays
        if arrays[0].domains.codes.shape[0] != cols.n:
            return None
        # Per row the first failing constraint's reason: 0 passes, 1 missing label, 2 skew. Each constraint's
        # reasons come from a table over its domains (one slot more for rows without the key). The rows'
        # reasons follow from the tables alone, and a key has few domains, so the tables of a cycle often
        # came before: the reasons and the mask are kept per tables (read only), not gathered again.
        pod_labels = pod.labels
        tables: list[tuple[Domains, bytes]] = []
        for i, (c, a) in enumerate(zip(s.constraints, arrays, strict=True)):
            d = a.domains
            if d.size:
                self_match = 1 if c.selector.matches(pod_labels) else 0
                limit = c.max_skew + s.min_match_num(i, c.min_domains) - self_match
                tables.append((d, bytes([2 if v > limit else 0 for v in a.tp])))
            else:
                tables.append((d, b""))
        key = tuple(tables)
        hit = self._verdicts.get(key)
        if hit is None:
            reason, ok = _spread_reasons(tables)
            cache: dict[int, Status] = {}

            def statuses_of(rows: np.ndarray) -> list[Status]:
                return template_statuses(reason[rows], _spread_status, cache)

            hit = self._verdicts[key] = BatchVerdict(ok, statuses_of)
            if len(self._verdicts) > _MAX_VERDICTS:
                self._verdicts.popitem(last=False)
        return hit

    def _pre_score_arrays(self, pod: Pod, constraints: list[Constraint], require_all: bool,
                          nodes: list[NodeInfo], rows: np.ndarray) -> PreScoreState:
        """PreScore on the feasible rows as arrays: the same sizes, weights and counts as the maps."""
        cluster, topo = self._arrays()
        s = PreScoreState(constraints)
        doms = [topo.domains(c.topology_key) for c in constraints]
        has_all = np.ones(topo.cols.n, dtype=bool)
        if require_all:
            for d in doms:
                has_all = has_all & d.has
        ignored = ~has_all[rows]
        kept = rows[~ignored]
        n_ignored = int(np.count_nonzero(ignored))
        elig = _Eligibility(pod, constraints)
        weights: list[float] = []
        per: list[tuple[Domains, np.ndarray | None]] = []
        for c, d in zip(constraints, doms, strict=True):
            if c.topology_key == LABEL_HOSTNAME:
                weights.append(go_log(float(len(nodes) - n_ignored + 2)))
                per.append((d, None))
                continue
            codes, ncodes = d.codes_or_empty()
            present = np.bincount(codes[kept], minlength=ncodes) > 0
            n_present = int(np.count_nonzero(present))
            weights.append(go_log(float(n_present + 2)))
            counts = np.full(ncodes, -1, dtype=np.int64)
            if n_present:
                m = has_all
                extra = self._eligible_masks(topo, pod, elig, c)
                if extra is not None:
                    m = m & extra
                if c.selector.empty or c.selector.nothing:
                    tot = np.zeros(ncodes, dtype=np.int64)
                else:
                    cnt = topo.match_counts(cluster, c.selector, pod.namespace, selector_key(c.selector))
                    tot = np.bincount(codes[m], weights=cnt[m], minlength=ncodes).astype(np.int64)
                counts[present] = tot[present]
            per.append((d, counts))
        s.topology_normalizing_weight = weights
        s.rows = rows
        s.arrays = (ignored, per)
        # the ignored nodes' names now (usually none), rather than every scored node's name for later
        s._ignored = {nodes[k].name for k in np.flatnonzero(ignored).tolist()} if n_ignored else set()
        s._counts = None
        return s

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        """``score`` of the rows ``rows`` at once (the rows PreScore saw; else None)."""
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or s.arrays is None or s.rows is None:
            return None
        if s.rows is not rows and not np.array_equal(s.rows, rows):
            return None
        ignored, per = s.arrays
        cluster, topo = self._arrays()
        acc = np.zeros(len(rows), dtype=np.float64)
        for c, (d, counts), w in zip(s.constraints, per, s.topology_normalizing_weight, strict=True):
            has = d.has[rows]
            if counts is None:  # hostname: the node's own matching pods
                if c.selector.empty or c.selector.nothing:
                    cnt = np.zeros(len(rows), dtype=np.int64)
                else:
                    cnt = topo.match_counts(cluster, c.selector, pod.namespace, selector_key(c.selector))[rows]
            else:
                codes, _ = d.codes_or_empty()
                cnt = np.maximum(counts[codes[rows]], 0)
            acc = np.where(has, acc + (cnt.astype(np.float64) * w + float(c.max_skew - 1)), acc)
        out = go_round_nonnegative(acc)  # every term added is >= 0
        out[ignored] = 0
        state.write(IGNORED_KEY, ignored)
        return out

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        hit = feasible_rows(state, nodes)
        values = self.batch_score(state, pod, hit[0], hit[1]) if hit is not None else None
        if values is not None:
            return values.tolist(), None
        out, st = ScorePlugin.score_nodes(self, state, pod, nodes)
        s = state.read(PRE_SCORE_STATE_KEY)
        if isinstance(s, PreScoreState):
            ign = s.ignored_nodes
            state.write(IGNORED_KEY, np.fromiter((ni.name in ign for ni in nodes), dtype=bool, count=len(nodes)))
        return out, st

    def batch_normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        """``normalize_score`` on the raw scores of the nodes just scored (batched path): the ignored
        nodes' flags come from that scoring."""
        ignored = state.read(IGNORED_KEY)
        arr = np.asarray(scores, dtype=np.int64)
        if ignored is None or len(ignored) != len(arr):
            raise ValueError("PodTopologySpread: normalizing without the scored nodes' flags")
        n_ignored = int(np.count_nonzero(ignored))
        if n_ignored == len(arr):
            return np.zeros(len(arr), dtype=np.int64)
        valid = arr[~ignored] if n_ignored else arr
        lo = int(valid[valid.argmin()])  # argmin/argmax: less call overhead than min/max reductions
        hi = max(int(valid[valid.argmax()]), 0)
        if hi == 0:
            out = np.full(len(arr), MAX_NODE_SCORE, dtype=np.int64)
        else:
            out = MAX_NODE_SCORE * (hi + lo - arr) // hi
        if n_ignored:
            out[ignored] = 0
        return out

    def normalize_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return self.batch_normalize(state, pod, np.asarray(values, dtype=np.int64)).tolist()

    @staticmethod
    def _counted(s: PreFilterState, updated: Pod, preemptor: Pod, ni: NodeInfo) -> list[int]:
        """The constraints whose count ``updated`` on ``ni`` is part of (same namespace as the incoming
        pod, the node has every topology key, the selector matches, the node is eligible)."""
        if updated.namespace != preemptor.namespace or not node_has_all_keys(ni.node.labels, s.constraints):
            return []
        out = []
        verdict: tuple[bool, bool] | None = None
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.labels):
                continue
            if verdict is None:
                verdict = _Eligibility(preemptor, s.constraints).per_node(ni)
            if _Eligibility.ok(c, verdict):
                out.append(i)
        return out

    def _update_with_pod(self, s: PreFilterState, updated: Pod, preemptor: Pod, ni: NodeInfo, delta: int) -> None:
        counted = self._counted(s, updated, preemptor, ni)
        if not counted:
            return  # no count changes: the arrays (if any) still describe the state
        s.mutable()
        labels = ni.node.labels
        for i in counted:
            v = labels[s.constraints[i].topology_key]
            m = s.writable_map(i)
            m[v] = m.get(v, 0) + delta
            s.critical_paths[i].update(v, m[v])

    def _read_pre_filter(self, state: CycleState) -> tuple[PreFilterState | None, Status | None]:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return None, Status.as_error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, PreFilterState):
            return None, Status.as_error(f"{s!r} convert to podtopologyspread.preFilterState error")
        return s, None

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        self._update_with_pod(s, pod_to_add, pod, node, 1)  # type: ignore[arg-type]
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        self._update_with_pod(s, pod_to_remove, pod, node, -1)  # type: ignore[arg-type]
        return None

    def remove_pod_changes(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> bool:
        s, err = self._read_pre_filter(state)
        return err is not None or bool(self._counted(s, pod_to_remove, pod, node))  # type: ignore[arg-type]

    def removal_check(self, state: CycleState, pod: Pod) -> Callable[[list[Pod], NodeInfo], bool] | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return lambda pods, node: True  # the real RemovePod reports the error
        assert s is not None
        if not s.constraints:
            return None  # nothing is counted
        namespace, counted = pod.namespace, self._counted

        def changes(pods: list[Pod], node: NodeInfo) -> bool:
            for p in pods:
                # only pods of the incoming pod's namespace are counted: most victims are rejected here
                if p.meta.namespace == namespace and counted(s, p, pod, node):
                    return True
            return False
        return changes

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        assert s is not None
        if not s.constraints:
            return None
        labels = node.node.labels
        pod_labels = pod.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            match_num = s.match_num(i, value)
            if match_num + self_match - min_match > c.max_skew:
                return Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    # ------------------------------------------------------------------ PreScore / Score
    def _all_nodes(self, fallback: list[NodeInfo]) -> list[NodeInfo]:
        if self.handle is None:
            return fallback
        return self.handle.snapshot.node_infos

    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads the nodes through feasible_rows, len and iteration)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        # (the constraints first: most pods have none to score with, and a Skip is a Skip whichever test
        # finds it; get_constraints keeps the filtered list of a spec's constraints, as PreFilter's)
        constraints = self.get_constraints(pod, SCHEDULE_ANYWAY)
        if not constraints:
            return PRE_SCORE_SKIP
        all_nodes = self._all_nodes(nodes)
        if not all_nodes:
            return Status(Code.Skip)
        require_all = bool(pod.spread_constraints) or not self.system_defaulted
        if self.handle is not None and self.handle.batched and all_nodes is self.handle.snapshot.node_infos:
            hit = feasible_rows(state, nodes)
            if hit is not None:
                state.write(PRE_SCORE_STATE_KEY, self._pre_score_arrays(pod, constraints, require_all, nodes, hit[1]))
                return None
        s = PreScoreState(constraints)
        n = len(constraints)
        counts: list[dict[str, int]] = [{} for _ in range(n)]
        topo_size = [0] * n
        is_host = [c.topology_key == LABEL_HOSTNAME for c in constraints]
        for ni in nodes:
            labels = ni.node.labels
            if require_all and not node_has_all_keys(labels, constraints):
                s.ignored_nodes.add(ni.name)
                continue
            for i, c in enumerate(constraints):
                if is_host[i]:
                    continue
                value = labels.get(c.topology_key, "")
                if value not in counts[i]:
                    counts[i][value] = 0
                    topo_size[i] += 1
        weights = []
        for i in range(n):
            size = len(nodes) - len(s.ignored_nodes) if is_host[i] else topo_size[i]
            weights.append(go_log(float(size + 2)))
        s.topology_value_to_pod_counts = counts
        s.topology_normalizing_weight = weights

        if any(counts[i] for i in range(n)) and self.handle is not None and self.handle.batched \
                and all_nodes is self.handle.snapshot.node_infos:
            tp_all = self._domain_counts(pod, constraints, require_all=require_all, skip_host=True)
            for i in range(n):
                if not is_host[i] and counts[i] and tp_all is not None:
                    totals = tp_all[i]
                    m = counts[i]
                    for value in m:
                        m[value] = totals.get(value, 0)
        elif any(counts[i] for i in range(n)):
            elig = _Eligibility(pod, constraints)
            ns = pod.namespace
            tables = [self._table(c, ns) for c in constraints]
            zero = [c.selector.empty or c.selector.nothing for c in constraints]
            active = [i for i in range(n) if not is_host[i] and counts[i]]
            for ni in all_nodes:
                labels = ni.node.labels
                if require_all and not node_has_all_keys(labels, constraints):
                    continue
                verdict = None
                for i in active:
                    c = constraints[i]
                    m = counts[i]
                    value = labels.get(c.topology_key, "")
                    if value not in m:
                        continue
                    if verdict is None:
                        verdict = elig.per_node(ni)
                    if not _Eligibility.ok(c, verdict):
                        continue
                    if not zero[i]:
                        m[value] += self._count(ni, c.selector, ns, tables[i])
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _read_pre_score(self, state: CycleState) -> tuple[PreScoreState | None, Status | None]:
        s = state.read(PRE_SCORE_STATE_KEY)
        if s is None:
            return None, Status.as_error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, PreScoreState):
            return None, Status.as_error(f"{s!r}  convert to podtopologyspread.preScoreState error")
        return s, None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        s, err = self._read_pre_score(state)
        if err is not None:
            return 0, err
        assert s is not None
        if node.name in s.ignored_nodes:
            return 0, None
        labels = node.node.labels
        score = 0.0
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                if c.selector.empty or c.selector.nothing:
                    cnt = 0
                else:
                    cnt = self._count(node, c.selector, pod.namespace, self._table(c, pod.namespace))
            else:
                cnt = s.topology_value_to_pod_counts[i].get(value, 0)
            score += float(cnt) * s.topology_normalizing_weight[i] + float(c.max_skew - 1)
        return round_half_away(score), None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s, err = self._read_pre_score(state)
        if err is not None:
            return err
        if s is None:
            return None
        min_score: int | None = None
        max_score = 0
        for ns in scores:
            if ns.name in s.ignored_nodes:
                ns.score = _INVALID_SCORE
                continue
            if min_score is None or ns.score < min_score:
                min_score = ns.score
            if ns.score > max_score:
                max_score = ns.score
        for ns in scores:
            if ns.score == _INVALID_SCORE:
                ns.score = 0
                continue
            if max_score == 0:
                ns.score = MAX_NODE_SCORE
                continue
            assert min_score is not None
            ns.score = MAX_NODE_SCORE * (max_score + min_score - ns.score) // max_score
        return None

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status,
                       ctx: WhatIfContext | None = None) -> Change | None:
        """Evict matching pods from the node's domain until maxSkew holds, or label the node into a domain
        that satisfies it (see ``spread_what_if``)."""
        return spread_what_if(state, pod, node, status, ctx) if ctx is not None else None


PLUGIN = PodTopologySpread


def factory(args: Any, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(handle, args)


# --------------------------------------------------------------------------- what-if
MAX_SPREAD_CHECKS = 25  # re-checks while growing a topology-spread eviction set


def spread_what_if(state: CycleState, pod: Pod, node: NodeInfo, status: Status, ctx: WhatIfContext) -> Change:
    """Per DoNotSchedule constraint the node violates: evict the lowest-priority matching pods of its domain
    (as many as the skew exceeds maxSkew, grown one pod per domain until the checked verdict flips, since
    PreFilter's counts decide); for a node without the topology label, the first domain that satisfies
    maxSkew, checked."""
    change = Change(NAME, SPREAD, status.message())
    s = state.read(PRE_FILTER_STATE_KEY)
    if not isinstance(s, PreFilterState):
        return change
    labels = node.node.labels
    rows = []
    victims: list[tuple[Pod, str]] = []
    grow: list[list[tuple[Pod, str]]] = []
    relabel: list[tuple[str, list[str]]] = []  # (topology key, domains to try) for a missing label
    for i, c in enumerate(s.constraints):
        counts = s.tp_value_to_match_num[i]
        min_match = s.min_match_num(i, c.min_domains)
        self_match = 1 if c.selector.matches(pod.labels) else 0
        ok_domains = sorted((v for v, n in counts.items() if n + self_match - min_match <= c.max_skew),
                            key=lambda v: (counts[v], v))
        row: dict[str, Any] = {"topology_key": c.topology_key, "max_skew": c.max_skew,
                               "selector": selector_text(c.selector), "min": min_match,
                               "min_domain": s.critical_paths[i].v0 if len(counts) >= c.min_domains else None,
                               "domains": len(counts), "min_domains": c.min_domains,
                               "ok_domains": [[v, counts[v]] for v in ok_domains[:5]],
                               "ok_domains_count": len(ok_domains)}
        value = labels.get(c.topology_key)
        if value is None:
            row["missing_label"] = True
            if ok_domains:
                change.set_labels[c.topology_key] = ok_domains[0]
                relabel.append((c.topology_key, ok_domains[:5]))
            rows.append(row)
            continue
        count = counts.get(value, 0)
        skew = count + self_match - min_match
        row.update(value=value, count=count, skew=skew)
        if skew <= c.max_skew:
            row["satisfied"] = True
            rows.append(row)
            continue
        excess = skew - c.max_skew
        row["excess"] = excess
        candidates = _domain_pods(pod, c, s.constraints, value, ctx)
        row["matching_in_domain"] = len(candidates)
        grow.append(candidates)
        victims.extend(candidates[:excess])
        rows.append(row)
    change.details["constraints"] = rows
    taken: set[str] = set()
    for p, n in victims:
        if p.key not in taken:
            taken.add(p.key)
            change.evict.append(Eviction(p.key, n, p.priority, p))
    if not change.has_modification:
        return change
    # a missing label: the first domain that satisfies maxSkew, checked; the next ones if it does not flip
    for key_, domains in relabel:
        for domain in domains:
            change.set_labels[key_] = domain
            if ctx.check(change, node.name):
                break
        else:
            change.set_labels[key_] = domains[0]
    # PreFilter's counts decide: grow the evictions one pod per domain until the checked verdict flips
    for _ in range(MAX_SPREAD_CHECKS):
        if ctx.check(change, node.name):
            break
        grown = False
        for candidates in grow:
            nxt = next(((p, n) for p, n in candidates if p.key not in taken), None)
            if nxt is not None:
                taken.add(nxt[0].key)
                change.evict.append(Eviction(nxt[0].key, nxt[1], nxt[0].priority, nxt[0]))
                grown = True
        if not grown:
            break
    return change


def _domain_pods(pod: Pod, c: Constraint, constraints: list[Constraint], value: str,
                 ctx: WhatIfContext) -> list[tuple[Pod, str]]:
    """Pods PreFilter counted in the domain ``value`` of ``c``: lowest priority first."""
    elig = _Eligibility(pod, constraints)
    out = []
    for ni in ctx.nodes:
        lab = ni.node.labels
        if lab.get(c.topology_key) != value or not node_has_all_keys(lab, constraints):
            continue
        if not _Eligibility.ok(c, elig.per_node(ni)):
            continue
        for p in ni.pods:
            if p.meta.deletion_timestamp is None and p.namespace == pod.namespace and c.selector.matches(p.labels):
                out.append((p, ni.name))
    out.sort(key=lambda pn: (pn[0].priority, pn[0].key))
    return out
