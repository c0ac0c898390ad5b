"""InterPodAffinity: required pod (anti-)affinity filters, preferred terms (and existing pods' terms) score.

Behaviour follows kube-scheduler v1.34 (reference §11):

* PreFilter counts, per (topologyKey, value): existing pods whose required anti-affinity matches the
  incoming pod, and existing pods matching the incoming pod's required affinity / anti-affinity terms.
  Filter looks those counts up (O(terms + node labels) per node).
* The incoming pod's terms get their namespaceSelector resolved against the Namespace objects; the
  selector itself stays on the term (upstream clears it on a copy only), so a selector that matches an
  empty label set still matches every namespace when terms are matched with nil namespace labels.
* PreScore sums weights per (topologyKey, value) from all pods (or only pods with affinity when the
  incoming pod has no preferred terms); Score adds the node's entries; NormalizeScore is a float
  min-max scaling with truncation.

Per-node partial results depend only on the node's pods and are memoised across cycles (see
``podtopologyspread.NodeValueCache``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

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
from pysched.framework.whatif import INTER_POD, Change, Eviction, WhatIfContext, WhatIfPlugin, selector_text
from pysched.model.objects import AffinityTerm, Pod, PodAffinity
from pysched.plugins.helper import decode_plugin_args
from pysched.plugins.podtopologyspread import LABEL_HOSTNAME, NodeValueCache, selector_key
from pysched.plugins.topology_arrays import TopologyArrays, hint_decides, label_hint, topology_arrays
from pysched.snapshot.columns import NodeColumns, columns_for, feasible_rows
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

_EMPTY: dict[str, str] = {}

TopologyPair = tuple[str, str]


# --------------------------------------------------------------------------- term matching

def term_matches(term: AffinityTerm, pod: Pod, ns_labels: Mapping[str, str] | None) -> bool:
    """Upstream ``AffinityTerm.Matches``: nil namespace labels are matched as an empty set, so a
    namespace selector that matches no labels (``{}``, NotIn, DoesNotExist) matches any namespace."""
    if pod.meta.namespace in term.namespaces or term.namespace_selector.matches(
            ns_labels if ns_labels is not None else _EMPTY):
        return term.selector.matches(pod.meta.labels)
    return False


def pod_matches_all_terms(terms: list[AffinityTerm], pod: Pod) -> bool:
    """Upstream ``podMatchesAllAffinityTerms`` (nil namespace labels); False for no terms."""
    if not terms:
        return False
    for t in terms:
        if not term_matches(t, pod, None):
            return False
    return True


def _term_sig(t: AffinityTerm) -> Hashable:
    """What decides ``term_matches(t, pod, None)`` for any pod (plus the topology key)."""
    return (t.namespaces, t.namespace_selector.matches(_EMPTY), selector_key(t.selector), t.topology_key)


# --------------------------------------------------------------------------- cycle state

class CountArrays:
    """PreFilter's three count maps as arrays per topology key (batched path): the sum per domain code of
    that key's ``Domains``; a map entry is a positive sum."""

    __slots__ = ("_any", "affinity", "anti", "existing", "topo")

    def __init__(self, topo: TopologyArrays, existing: dict[str, np.ndarray], affinity: dict[str, np.ndarray],
                 anti: dict[str, np.ndarray]) -> None:
        self.topo = topo
        self.existing = existing
        self.affinity = affinity
        self.anti = anti
        self._any: dict[str, bool] = {}  # never written after PreFilter (AddPod/RemovePod drop the arrays)

    def any_positive(self, which: str) -> bool:
        """Whether the map ``which`` ("existing", "affinity", "anti") has an entry."""
        hit = self._any.get(which)
        if hit is None:
            hit = self._any[which] = any(bool((a > 0).any()) for a in getattr(self, which).values())
        return hit

    def to_dict(self, per_key: dict[str, np.ndarray]) -> dict[TopologyPair, int]:
        out: dict[TopologyPair, int] = {}
        for tk, sums in per_key.items():
            values = self.topo.domains(tk).values
            for code in np.flatnonzero(sums > 0).tolist():
                out[(tk, values[code])] = int(sums[code])
        return out

    def positive_at(self, per_key: dict[str, np.ndarray], key: str) -> np.ndarray:
        """Per node row: the node has ``key`` and the sum of its domain is positive."""
        d = self.topo.domains(key)
        sums = per_key.get(key)
        if sums is None:
            return np.zeros(self.topo.cols.n, dtype=bool)
        pos = np.append(sums > 0, False)  # the last slot: nodes without the key
        return pos[d.ext]


class PreFilterState(StateData):
    """PreFilter's counts. On the batched path they are arrays (``arrays``) and the maps are built only
    when something reads them; AddPod/RemovePod work on the maps and drop the arrays."""

    __slots__ = ("_affinity", "_anti", "_existing", "_shared", "arrays", "namespace_labels", "pod",
                 "required_affinity", "required_anti")

    def __init__(self, existing_anti_affinity_counts: dict[TopologyPair, int] | None = None,
                 affinity_counts: dict[TopologyPair, int] | None = None,
                 anti_affinity_counts: dict[TopologyPair, int] | None = None,
                 required_affinity: list[AffinityTerm] | None = None, required_anti: list[AffinityTerm] | None = None,
                 pod: Pod | None = None, namespace_labels: dict[str, str] | None = None,
                 arrays: CountArrays | None = None) -> None:
        self._existing = existing_anti_affinity_counts if existing_anti_affinity_counts is not None or arrays else {}
        self._affinity = affinity_counts if affinity_counts is not None or arrays else {}
        self._anti = anti_affinity_counts if anti_affinity_counts is not None or arrays else {}
        self.required_affinity = required_affinity if required_affinity is not None else []  # namespaces resolved
        self.required_anti = required_anti if required_anti is not None else []  # namespaces resolved
        self.pod = pod
        self.namespace_labels = namespace_labels if namespace_labels is not None else {}
        self.arrays = arrays
        self._shared = False  # the three maps are shared with a clone: copied before the first write

    @property
    def existing_anti_affinity_counts(self) -> dict[TopologyPair, int]:
        if self._existing is None:
            assert self.arrays is not None
            self._existing = self.arrays.to_dict(self.arrays.existing)
        return self._existing

    @existing_anti_affinity_counts.setter
    def existing_anti_affinity_counts(self, value: dict[TopologyPair, int]) -> None:
        self._existing = value

    @property
    def affinity_counts(self) -> dict[TopologyPair, int]:
        if self._affinity is None:
            assert self.arrays is not None
            self._affinity = self.arrays.to_dict(self.arrays.affinity)
        return self._affinity

    @affinity_counts.setter
    def affinity_counts(self, value: dict[TopologyPair, int]) -> None:
        self._affinity = value

    @property
    def anti_affinity_counts(self) -> dict[TopologyPair, int]:
        if self._anti is None:
            assert self.arrays is not None
            self._anti = self.arrays.to_dict(self.arrays.anti)
        return self._anti

    @anti_affinity_counts.setter
    def anti_affinity_counts(self, value: dict[TopologyPair, int]) -> None:
        self._anti = value

    def has_existing(self) -> bool:
        if self._existing is None and self.arrays is not None:
            return self.arrays.any_positive("existing")
        return bool(self.existing_anti_affinity_counts)

    def has_affinity(self) -> bool:
        if self._affinity is None and self.arrays is not None:
            return self.arrays.any_positive("affinity")
        return bool(self.affinity_counts)

    def has_anti(self) -> bool:
        if self._anti is None and self.arrays is not None:
            return self.arrays.any_positive("anti")
        return bool(self.anti_affinity_counts)

    def clone(self) -> PreFilterState:
        # The maps are built once here and shared until one side writes (preemption clones per
        # candidate node; most dry runs remove no pod that a term counts).
        c = PreFilterState(self.existing_anti_affinity_counts, self.affinity_counts,
                           self.anti_affinity_counts, self.required_affinity, self.required_anti,
                           self.pod, self.namespace_labels)
        c._shared = self._shared = True
        return c

    def _own_maps(self) -> None:
        if self._shared:
            self._existing = dict(self.existing_anti_affinity_counts)
            self._affinity = dict(self.affinity_counts)
            self._anti = dict(self.anti_affinity_counts)
            self._shared = False

    def __repr__(self) -> str:
        return f"PreFilterState(pod={self.pod.key if self.pod else None!r})"

    def _counted(self, other: Pod) -> list[tuple[int, str]]:
        """The counts ``other`` is part of, in update order: (0 existing anti-affinity, 1 affinity,
        2 anti-affinity; topology key). A node without that key holds none of them."""
        incoming = self.pod
        assert incoming is not None
        out: list[tuple[int, str]] = []
        if other.affinity.required_anti:
            out += [(0, t.topology_key) for t in other.affinity.required_anti
                    if term_matches(t, incoming, self.namespace_labels)]
        if self.required_affinity and pod_matches_all_terms(self.required_affinity, other):
            out += [(1, t.topology_key) for t in self.required_affinity]
        if self.required_anti:
            out += [(2, t.topology_key) for t in self.required_anti if term_matches(t, other, None)]
        return out

    def changes_with(self, other: Pod, node: NodeInfo) -> bool:
        """Whether ``update_with_pod(other, node, ...)`` would change any count."""
        labels = node.node.labels
        return any(key in labels for _, key in self._counted(other))

    def update_with_pod(self, other: Pod, node: NodeInfo, multiplier: int) -> None:
        """AddPod / RemovePod: account for ``other`` appearing on (or leaving) ``node``."""
        if self.arrays is not None:  # the maps change: the arrays no longer describe them
            _ = self.existing_anti_affinity_counts, self.affinity_counts, self.anti_affinity_counts
            self.arrays = None
        labels = node.node.labels
        counted = self._counted(other)
        if not counted:
            return
        self._own_maps()
        maps = (self.existing_anti_affinity_counts, self.affinity_counts, self.anti_affinity_counts)
        for which, key in counted:
            _update(maps[which], labels, key, multiplier)


def _update(m: dict[TopologyPair, int], labels: Mapping[str, str], key: str, value: int) -> None:
    tv = labels.get(key)
    if tv is None:
        return
    pair = (key, tv)
    n = m.get(pair, 0) + value
    if n == 0:
        m.pop(pair, None)
    else:
        m[pair] = n


class PreScoreState(StateData):
    """Summed weights per (topology key, value). On the batched path they are kept as sums over the
    incoming pod's terms and over the existing pods' terms (``aggregates``), turned into maps and merged
    only when something reads them."""

    __slots__ = ("_merged", "_parts", "aggregates")

    def __init__(self, topology_score: dict[str, dict[str, int]] | None = None,
                 aggregates: tuple[_DomainSums, ...] = ()) -> None:
        self._merged = topology_score
        self._parts: tuple[dict[str, dict[str, int]], ...] | None = \
            None if topology_score is None else (topology_score,)
        self.aggregates = aggregates  # batched: the kept sums (with their arrays)

    @property
    def parts(self) -> tuple[dict[str, dict[str, int]], ...]:
        if self._parts is None:
            self._parts = tuple(a.score for a in self.aggregates)
        return self._parts

    @property
    def topology_score(self) -> dict[str, dict[str, int]]:
        if self._merged is None:
            merged: dict[str, dict[str, int]] = {}
            for part in self.parts:
                for tk, values in part.items():
                    m = merged.setdefault(tk, {})
                    for tv, w in values.items():
                        m[tv] = m.get(tv, 0) + w
            self._merged = merged
        return self._merged

    def empty(self) -> bool:
        if self._parts is None:
            for a in self.aggregates:  # (a loop, not any() over a generator: asked once per scored pod)
                if a.matches > 0:  # _DomainSums.present()
                    return False
            return True
        return not any(self._parts)

    def clone(self) -> PreScoreState:
        return self  # never mutated after PreScore


# --------------------------------------------------------------------------- args

def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)



# --------------------------------------------------------------------------- parse errors

_GROUPS = (
    ("podAffinity.requiredDuringScheduling", "requiredAffinityTerms"),
    ("podAntiAffinity.requiredDuringScheduling", "requiredAntiAffinityTerms"),
    ("podAffinity.preferredDuringScheduling", "preferredAffinityTerms"),
    ("podAntiAffinity.preferredDuringScheduling", "preferredAntiAffinityTerms"),
)
_BAD_OPERATOR = re.compile(r"^(['\"])(.*)\1 is not a valid selector operator")


def parse_error_message(err: str) -> str:
    """Upstream wraps the selector error with the term group (``requiredAffinityTerms: ...``).
    The selector error itself is pysched's wording, except for an unknown operator."""
    group = ""
    for marker, name in _GROUPS:
        if marker in err:
            group = name
            break
    detail = err
    head, sep, tail = err.partition(": ")
    if sep and " " not in head:  # strip pysched's field path
        detail = tail
    m = _BAD_OPERATOR.match(detail)
    if m:
        detail = f'"{m.group(2)}" is not a valid label selector operator'
    return f"{group}: {detail}" if group else detail


# --------------------------------------------------------------------------- plugin

_MAX_AGGREGATES = 256
_MAX_SHAPES = 1024
_MAX_SCORE_F = np.array(float(MAX_NODE_SCORE))  # (a 0-d operand: no Python number converted per call)
_MAX_SCORE_F.flags.writeable = False


_TABLE_DIFF = 4096  # normalized scores of raw scores -diff .. 0 with diff at most this come from a table
_ROLLED: dict[int, np.ndarray] = {}


def _normalized_table(diff: int) -> np.ndarray:
    """``int(MaxNodeScore * (float(k) / float(diff)))`` for k = 0 .. diff (int64): the normalized score of
    a raw score ``min + k`` (``batch_normalize``'s float steps on every possible offset, so the same
    numbers)."""
    f = np.arange(diff + 1, dtype=np.int64) / float(diff)
    np.multiply(f, _MAX_SCORE_F, out=f)
    return f.astype(np.int64)


def _rolled_table(diff: int) -> np.ndarray:
    """``_normalized_table(diff)`` rolled by one: indexed by the raw scores themselves when the highest is
    0 (they are -diff .. 0: a negative index counts from the end, so score ``-k`` reads slot
    ``diff + 1 - k``, the normalized score of offset ``diff - k``, and score 0 slot 0, that of ``diff``),
    which spares the subtraction of the lowest score (read only, kept per ``diff``)."""
    table = _ROLLED.get(diff)
    if table is None:
        if len(_ROLLED) >= 256:
            _ROLLED.clear()
        table = np.roll(_normalized_table(diff), 1)
        table.flags.writeable = False
        _ROLLED[diff] = table
    return table


class _ExistingTerms:
    """Terms of the pods in the cluster, each distinct (term, weight) once, with per domain of its topology
    key how many pods on nodes there carry it (batched path): PreScore's (required affinity with the hard
    weight, preferred affinity, preferred anti-affinity with a negative weight) or, with ``anti``,
    PreFilter's (required anti-affinity, weight 1). Kept from ``change_log``: a changed node is recounted
    once for every incoming pod, and each change of a count is appended to its term's ``deltas`` for the
    per-pod sums (``_MatchedSums``) to replay (those of the terms matching the pod alone)."""

    __slots__ = ("anti", "cluster", "codes", "deltas", "hard", "ids", "keys", "pos", "rows", "seen", "sums",
                 "terms", "topo")

    def __init__(self, cluster: Any, topo: TopologyArrays, hard: int, anti: bool = False) -> None:
        self.cluster = cluster
        self.topo = topo
        self.hard = hard
        self.anti = anti
        self.keys: dict[Hashable, int] = {}
        self.ids: dict[int, tuple[AffinityTerm, int]] = {}  # id(term) -> (term, its index)
        self.terms: list[tuple[AffinityTerm, int, str]] = []  # (a term, its signed weight, its topology key)
        # (lists, not arrays: they are read and written one item at a time, at a fraction of the cost)
        self.codes: list[list[int]] = []  # per term: the domain code of every node row (-1: no key)
        self.sums: list[list[int]] = []  # per term: pods carrying it per domain code
        self.rows: dict[int, dict[int, int]] = {}  # node row -> term index -> pods carrying it there
        self.deltas: list[list[tuple[int, int]]] = []  # per term: (domain code, change of its count)
        self.seen: dict[int, tuple[Pod, ...]] = {}  # node row -> the pods with terms counted there
        self.pos = len(cluster.change_log)
        for r, ni in enumerate(topo.cols.infos):
            if ni.pods_with_required_anti_affinity if anti else ni.pods_with_affinity:
                self._recount(r, ni)

    def _index(self, t: AffinityTerm, w: int) -> int:
        hit = self.ids.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        key = (t.namespaces, selector_key(t.namespace_selector), selector_key(t.selector), t.topology_key, w)
        i = self.keys.get(key)
        if i is None:
            i = self.keys[key] = len(self.terms)
            d = self.topo.domains(t.topology_key)
            self.terms.append((t, w, t.topology_key))
            self.codes.append(d.code_list)
            self.sums.append([0] * d.size)
            self.deltas.append([])
        self.ids[id(t)] = (t, i)
        return i

    def _recount(self, r: int, ni: NodeInfo) -> None:
        holders = tuple(ni.pods_with_required_anti_affinity if self.anti else ni.pods_with_affinity)
        if self.seen.get(r, ()) == holders:  # the same pods (compared by identity first): the same counts
            return
        self.seen[r] = holders
        new: dict[int, int] = {}
        hard = self.hard
        if self.anti:
            for ep in ni.pods_with_required_anti_affinity:
                for t in ep.affinity.required_anti:
                    i = self._index(t, 1)
                    new[i] = new.get(i, 0) + 1
        for ep in () if self.anti else ni.pods_with_affinity:
            ea = ep.affinity
            if hard > 0:
                for t in ea.required_affinity:
                    i = self._index(t, hard)
                    new[i] = new.get(i, 0) + 1
            for t in ea.preferred_affinity:
                i = self._index(t, t.weight)
                new[i] = new.get(i, 0) + 1
            for t in ea.preferred_anti:
                i = self._index(t, -t.weight)
                new[i] = new.get(i, 0) + 1
        old = self.rows.get(r)
        if old == new or (old is None and not new):
            return
        old = old or {}
        for i in dict.fromkeys([*old, *new]):
            dc = new.get(i, 0) - old.get(i, 0)
            code = self.codes[i][r]
            if dc and code >= 0:
                self.sums[i][code] += dc
                self.deltas[i].append((code, dc))
        if new:
            self.rows[r] = new
        else:
            del self.rows[r]

    def catch_up(self) -> None:
        cluster = self.cluster
        log = cluster.change_log
        pos = self.pos
        end = len(log)
        if pos < end:
            moved = cluster.change_pods
            anti = self.anti
            if end == pos + 1:  # (one bind since the last call, the usual case: no loop, no dict)
                p = moved[pos]
                if p is not None and not (p.affinity.required_anti if anti else p.affinity.has_affinity):
                    self.pos = end  # a pod without such terms bound: the node's holders are as they were
                    return
            # the nodes whose holders may have changed: those a pod with such terms was bound to, and those
            # a pod left (``_recount`` compares the holders)
            todo: dict[str, None] = {}
            for i in range(pos, end):
                p = moved[i]
                if p is None or (p.affinity.required_anti if anti else p.affinity.has_affinity):
                    todo[log[i]] = None
            index = self.topo.cols.index
            infos = self.topo.cols.infos
            for name in todo:
                r = index.get(name)
                if r is not None:
                    self._recount(r, infos[r])
            self.pos = end


class _DomainSums:
    """Summed weights per topology key over its domain codes (``weights``; the last slot, nodes without
    the key, stays 0) with how many (pod, term) matches made each entry (``presence``: upstream's map has
    an entry while one does, even when the weights cancel out). ``matches``: the sum of every presence
    entry (entries never go below 0, so some entry is set exactly when it is positive).

    The weights are kept twice: as arrays (``weights``, what Score and PreFilter's counts read) and as
    lists (``_wlist``) that the one-entry updates add to before copying the entry into the array (a list
    item add and an array store cost about a third of an add on an array element); the presence counts are
    only ever read as a whole by ``score``, so they are lists alone."""

    __slots__ = ("_wlist", "matches", "presence", "topo", "weights")

    def __init__(self, topo: TopologyArrays) -> None:
        self.topo = topo
        self.weights: dict[str, np.ndarray] = {}
        self._wlist: dict[str, list[int]] = {}
        self.presence: dict[str, list[int]] = {}
        self.matches = 0

    def _arrays(self, tk: str) -> tuple[np.ndarray, list[int], list[int]]:
        """The weights of ``tk`` (array and list) and its presence counts, for the caller to write into (both
        weights alike) and to add what it adds to ``matches``."""
        w = self.weights.get(tk)
        if w is None:
            size = self.topo.domains(tk).size + 1
            w = self.weights[tk] = np.zeros(size, dtype=np.int64)
            self._wlist[tk] = [0] * size
            self.presence[tk] = [0] * size
        return w, self._wlist[tk], self.presence[tk]

    @property
    def score(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for tk, pl in self.presence.items():
            codes = [c for c, n in enumerate(pl) if n > 0]
            if codes:
                values = self.topo.domains(tk).values
                wl = self._wlist[tk]
                out[tk] = {values[c]: wl[c] for c in codes}
        return out

    def present(self) -> bool:
        return self.matches > 0


# what ``_IncomingSums`` replays read of one term (see there)
_Plan = tuple[AffinityTerm, tuple[str, str] | None, int, str, list[int], bool, bool]


class _IncomingSums(_DomainSums):
    """The incoming pod's preferred terms (signed weights) against the pods on every node, summed per
    domain; kept by replaying ``TopologyArrays.pod_events`` (one match per pod that moved)."""

    __slots__ = ("plans", "pos", "terms")

    def __init__(self, topo: TopologyArrays, terms: list[tuple[AffinityTerm, int]], cluster: Any,
                 events_at: int) -> None:
        super().__init__(topo)
        self.terms = terms
        # per term, what every replay reads of it (worked out once): its label hint, its signed weight, its
        # topology key, that key's domain code per node row, whether its namespace selector matches
        # the nil namespace labels (``term_matches(t, p, None)`` then reads the pod's labels alone), and
        # whether the hint decides its selector's match (the pods replayed all carry the hint)
        self.plans: list[_Plan] = []
        for t, w in terms:
            hint = label_hint(t.selector)
            self.plans.append((t, hint, w, t.topology_key, topo.domains(t.topology_key).code_list,
                               t.namespace_selector.matches(_EMPTY), hint_decides(t.selector, hint)))
        self.pos = events_at  # ``pod_events`` is up to date with ``cluster`` at ``events_at``
        infos = topo.cols.infos
        for plan in self.plans:  # term by term (sums: the order does not matter), only pods with a required label
            if plan[1] is not None:
                self._replay(plan, topo.labelled_pods(cluster, plan[1]))
                continue
            self._replay(plan, [(row, p, 1) for row, ni in enumerate(infos) for p in ni.pods])

    def _replay(self, plan: _Plan, moves: list[tuple[int, Pod, int]]) -> None:
        """Add the (row, pod, +1/-1) ``moves`` of the pods that one term (``plan``) matches (with nil
        namespace labels, as ``term_matches``) to its key's domains (one call per term, not one per pod)."""
        if not moves:
            return
        t, _, w, tk, code_of, any_ns, decided = plan
        names = t.namespaces
        sel = t.selector
        wl: list[int] | None = None  # (the key's arrays made at its first match)
        wa: Any = None
        pl: Any = None
        added = 0
        for row, p, d in moves:
            meta = p.meta
            if (meta.namespace in names or any_ns) and (decided or sel.matches(meta.labels)):
                code = code_of[row]
                if code >= 0:
                    if wl is None:
                        wa, wl, pl = self._arrays(tk)
                    v = wl[code] + w * d
                    wl[code] = v
                    wa[code] = v
                    pl[code] += d
                    added += d
        self.matches += added

    def update(self, cluster: Any, end: int) -> None:
        """Replay the pods that moved since the last use, term by term (sums: the order does not matter),
        each term only over the pods with a label its selector requires; ``end``: the length of
        ``pod_events``, up to date with ``cluster``."""
        if self.pos < end:
            topo = self.topo
            start = self.pos
            for plan in self.plans:
                self._replay(plan, topo.events_since(cluster, start, plan[1]))
            self.pos = end


class _MatchedSums(_DomainSums):
    """For one incoming pod's namespace, labels and namespace labels: the existing pods' terms that match
    it, summed per domain. Kept by replaying the ``_ExistingTerms.deltas`` of the terms that match."""

    __slots__ = ("at", "hits", "matched")

    def __init__(self, terms: _ExistingTerms, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        super().__init__(terms.topo)
        self.matched: list[bool] = []
        self.hits: list[int] = []  # the indexes of the terms that match, in term order
        self.at: dict[int, int] = {}  # per such term: how many of its deltas are in the sums
        self._extend(terms, pod, ns_labels, True)

    def _extend(self, terms: _ExistingTerms, pod: Pod, ns_labels: Mapping[str, str], counted: bool) -> None:
        """Match the terms met since; with ``counted``, add their counts so far (a term met later has all
        its counts still in its ``deltas``)."""
        for i in range(len(self.matched), len(terms.terms)):
            t, w, tk = terms.terms[i]
            m = term_matches(t, pod, ns_labels)
            self.matched.append(m)
            if not m:
                continue
            self.hits.append(i)
            if not counted:
                self.at[i] = 0
                continue
            self.at[i] = len(terms.deltas[i])
            wa, wl, pl = self._arrays(tk)
            for code, n in enumerate(terms.sums[i]):
                if n:
                    wl[code] += w * n
                    pl[code] += n
                    self.matches += n
            wa[:] = wl

    def update(self, terms: _ExistingTerms, pod: Pod, ns_labels: Mapping[str, str]) -> None:
        if len(self.matched) < len(terms.terms):  # (most calls meet no new term)
            self._extend(terms, pod, ns_labels, False)
        at = self.at
        deltas = terms.deltas
        for i in self.hits:
            lst = deltas[i]
            k = at[i]
            if k < len(lst):
                _, w, tk = terms.terms[i]
                wa, wl, pl = self._arrays(tk)
                added = 0
                for code, dc in lst[k:]:
                    v = wl[code] + w * dc
                    wl[code] = v
                    wa[code] = v
                    pl[code] += dc
                    added += dc
                self.matches += added
                at[i] = len(lst)


class InterPodAffinity(PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, WhatIfPlugin):
    NAME = NAME
    HAS_EXTENSIONS = True
    HAS_NORMALIZE = True
    BATCH_SCORE_SPANS = True  # batch_score takes a slice of rows (reads the domain codes through it)
    # batch_normalize maps the feasible rows' scores onto 0..MAX_NODE_SCORE; it leaves them as they are only
    # when no map entry is present, where every sum (hence every score) is 0
    BATCH_SCORES_IN_RANGE = True

    def __init__(self, handle: Handle | None, args: Any = None) -> None:
        if args is None:
            args = decode_args(None)
        self.handle = handle
        self.hard_pod_affinity_weight = int(getattr(args, "hard_pod_affinity_weight", 1))
        self.ignore_preferred_terms_of_existing_pods = bool(
            getattr(args, "ignore_preferred_terms_of_existing_pods", False))
        self._cache = NodeValueCache()
        self._aggregates: OrderedDict[int, _IncomingSums] = OrderedDict()
        # per PodAffinity object (pods parsed from one spec share it): (it, its key in ``_aggregates``, its
        # preferred terms resolved with their signed weights), see ``_incoming_shape``; the keys are numbers
        # given per distinct signature of the terms (``_key_ids``), never given twice
        self._shapes: dict[int, tuple[PodAffinity, int, list[tuple[AffinityTerm, int]]]] = {}
        self._key_ids: dict[Hashable, int] = {}
        self._next_key = 0
        self._aff_nodes: dict[str, NodeInfo] = {}
        self._held_of: Any = None  # the ClusterState the two maps describe
        self._anti_nodes: dict[str, NodeInfo] = {}
        self._anti_version = -1
        # batched: the existing pods' scoring terms [False] and required anti-affinity terms [True], and
        # per incoming pod shape the sums of those matching it
        self._terms: dict[bool, _ExistingTerms | None] = {False: None, True: None}
        self._matched: dict[bool, OrderedDict[Hashable, _MatchedSums]] = {False: OrderedDict(), True: OrderedDict()}

    # ------------------------------------------------------------------ helpers
    def _tables(self) -> NodeValueCache:
        """Per-node results kept across cycles on the fast path; on the reference path (``Handle.batched``
        off) a fresh cache for one call, so everything is computed from the cluster as it stands."""
        if self.handle is None or self.handle.batched:
            return self._cache
        return NodeValueCache()

    def _namespaces(self) -> list:
        if self.handle is None:
            return []
        return list(self.handle.snapshot.cluster.namespaces.values())

    def _ns_labels(self, namespace: str) -> dict[str, str]:
        if self.handle is None:
            return {}
        return self.handle.snapshot.ns_labels(namespace)

    def resolve_terms(self, terms: list[AffinityTerm]) -> list[AffinityTerm]:
        """``mergeAffinityTermNamespacesIfNotEmpty`` on copies: add the names of the namespaces a
        non-empty namespaceSelector selects. The selector is kept (the upstream quirk)."""
        out = []
        namespaces = None
        for t in terms:
            sel = t.namespace_selector
            names = t.namespaces
            if not sel.nothing and not sel.empty:
                if namespaces is None:
                    namespaces = self._namespaces()
                extra = {ns.name for ns in namespaces if sel.matches(ns.labels)}
                if extra - names:
                    names = names | extra
            out.append(AffinityTerm(names, t.selector, t.topology_key, sel, t.weight))
        return out

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        aff = pod.affinity
        if aff.parse_error:
            return None, Status.unresolvable(f"parsing pod: {parse_error_message(aff.parse_error)}")
        handle = self.handle
        batched = handle is not None and handle.batched and nodes is handle.snapshot.node_infos
        if batched and not aff.required_affinity and not aff.required_anti and not self._holders()[1]:
            # no term of the pod's and no existing pod with required anti-affinity: upstream's counts are
            # all empty (Skip)
            return None, PRE_FILTER_SKIP
        s = PreFilterState(
            required_affinity=self.resolve_terms(pod.affinity.required_affinity),
            required_anti=self.resolve_terms(pod.affinity.required_anti),
            pod=pod,
            namespace_labels=self._ns_labels(pod.namespace),
        )
        if batched:
            s.arrays = self._count_arrays(pod, s)
            s._existing = s._affinity = s._anti = None
            if not s.has_existing() and not s.required_affinity and not s.required_anti:
                return None, Status(Code.Skip)
            state.write(PRE_FILTER_STATE_KEY, s)
            return None, None
        anti_nodes = nodes
        s.existing_anti_affinity_counts = self._existing_anti_affinity_counts(pod, s.namespace_labels, anti_nodes)
        s.affinity_counts, s.anti_affinity_counts = self._incoming_counts(s.required_affinity, s.required_anti, nodes)
        if not s.existing_anti_affinity_counts and not s.required_affinity and not s.required_anti:
            return None, Status(Code.Skip)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def _count_arrays(self, pod: Pod, s: PreFilterState) -> CountArrays:
        """PreFilter's counts as arrays: per-node values kept across cycles (only the nodes in
        ``change_log`` are recomputed), summed per domain."""
        cluster = self.handle.snapshot  # type: ignore[union-attr]
        topo = topology_arrays(columns_for(cluster))
        ns_labels = s.namespace_labels

        # the existing pods' required anti-affinity terms that match the pod, summed per domain (this
        # cycle's own copies: the kept sums move on with later cycles)
        matched = self._matched_sums(True, pod, ns_labels, cluster, topo)
        ex = {tk: w[:-1].copy() for tk, w in matched.weights.items()}
        aff_sums: dict[str, np.ndarray] = {}
        anti_sums: dict[str, np.ndarray] = {}
        aff, anti = s.required_affinity, s.required_anti
        if aff or anti:
            def incoming(ep: Pod) -> list[int]:
                """What an existing pod counts for: -1 all of the affinity terms match it, j anti term j."""
                out = [-1] if aff and pod_matches_all_terms(aff, ep) else []
                for j, t in enumerate(anti):
                    if term_matches(t, ep, None):
                        out.append(j)
                return out

            # per node row, its pods matching; only the pods that moved since the last use are matched (with
            # one term, only those with a label its selector requires)
            terms = [*aff, *anti]
            per_incoming = topo.pod_counts(
                cluster, ("incoming", tuple(_term_sig(t) for t in aff), tuple(_term_sig(t) for t in anti)),
                incoming, label_hint(terms[0].selector) if len(terms) == 1 else None)
            n_all = per_incoming.get(-1)
            if n_all is not None:
                for t in aff:  # every term adds the node's count to its key's domain (as the maps do)
                    sums = topo.domain_sums(t.topology_key, n_all)
                    prev = aff_sums.get(t.topology_key)
                    aff_sums[t.topology_key] = sums if prev is None else prev + sums
            for j, t in enumerate(anti):
                arr = per_incoming.get(j)
                if arr is not None:
                    sums = topo.domain_sums(t.topology_key, arr)
                    prev = anti_sums.get(t.topology_key)
                    anti_sums[t.topology_key] = sums if prev is None else prev + sums
        return CountArrays(topo, ex, aff_sums, anti_sums)

    def _holders(self) -> tuple[dict[str, NodeInfo], dict[str, NodeInfo]]:
        """The nodes holding pods with affinity terms, and those holding pods with required anti-affinity
        (upstream's HavePodsWithAffinityList / HavePodsWithRequiredAntiAffinityList), kept up to date
        from ``change_log`` (batched path)."""
        cluster = self.handle.snapshot  # type: ignore[union-attr]
        log = cluster.change_log
        n = len(log)
        at = self._anti_version
        if self._held_of is cluster:
            if at == n:  # PreScore after PreFilter
                return self._aff_nodes, self._anti_nodes
            if at + 1 == n and at >= 0:  # one change since, the usual case: a bind of a pod without terms?
                p = cluster.change_pods[at]
                if p is not None and not p.affinity.has_affinity and not p.affinity.required_anti:
                    self._anti_version = n  # (the maps as they were)
                    return self._aff_nodes, self._anti_nodes
        if at < 0 or self._held_of is not cluster or at > n:
            self._held_of = cluster
            self._aff_nodes = {ni.name: ni for ni in cluster.node_infos if ni.pods_with_affinity}
            self._anti_nodes = {ni.name: ni for ni in cluster.node_infos if ni.pods_with_required_anti_affinity}
        else:
            # the nodes changed since: a bind of a pod without terms changes neither map (the usual case:
            # nothing looked up), else the node is looked at; a node is in a map while it holds such pods
            # (the maps are only asked whether they are empty)
            moved = cluster.change_pods
            by_name = cluster.by_name
            aff, anti = self._aff_nodes, self._anti_nodes
            for i in range(at, n):
                p = moved[i]
                if p is not None:
                    pa = p.affinity
                    if not pa.has_affinity and not pa.required_anti:
                        continue
                name = log[i]
                ni = by_name.get(name)
                if ni is not None and ni.pods_with_affinity:
                    aff[name] = ni
                elif name in aff:
                    del aff[name]
                if ni is not None and ni.pods_with_required_anti_affinity:
                    anti[name] = ni
                elif name in anti:
                    del anti[name]
        self._anti_version = n
        return self._aff_nodes, self._anti_nodes

    def _existing_anti_affinity_counts(self, pod: Pod, ns_labels: dict[str, str],
                                       nodes: list[NodeInfo]) -> dict[TopologyPair, int]:
        result: dict[TopologyPair, int] = {}
        table = None

        def compute(ni: NodeInfo) -> dict[str, int]:
            per_key: dict[str, int] = {}
            for ep in ni.pods_with_required_anti_affinity:
                for t in ep.affinity.required_anti:
                    if term_matches(t, pod, ns_labels):
                        per_key[t.topology_key] = per_key.get(t.topology_key, 0) + 1
            return per_key

        for ni in nodes:
            if not ni.pods_with_required_anti_affinity:
                continue
            if table is None:
                table = self._tables().table(("existing-anti", pod.namespace, frozenset(pod.labels.items()),
                                           frozenset(ns_labels.items())))
            per_key = NodeValueCache.lookup(table, ni, compute)
            if not per_key:
                continue
            labels = ni.node.labels
            for tk, cnt in per_key.items():
                tv = labels.get(tk)
                if tv is not None:
                    pair = (tk, tv)
                    result[pair] = result.get(pair, 0) + cnt
        return result

    def _incoming_counts(self, aff: list[AffinityTerm], anti: list[AffinityTerm],
                         nodes: list[NodeInfo]) -> tuple[dict[TopologyPair, int], dict[TopologyPair, int]]:
        affinity_counts: dict[TopologyPair, int] = {}
        anti_counts: dict[TopologyPair, int] = {}
        if not aff and not anti:
            return affinity_counts, anti_counts
        table = self._tables().table(("incoming", tuple(_term_sig(t) for t in aff), tuple(_term_sig(t) for t in anti)))

        def compute(ni: NodeInfo) -> tuple[int, tuple[int, ...]]:
            n_all = 0
            n_anti = [0] * len(anti)
            for ep in ni.pods:
                if aff and pod_matches_all_terms(aff, ep):
                    n_all += 1
                for j, t in enumerate(anti):
                    if term_matches(t, ep, None):
                        n_anti[j] += 1
            return n_all, tuple(n_anti)

        for ni in nodes:
            if not ni.pods:
                continue
            n_all, n_anti = NodeValueCache.lookup(table, ni, compute)
            labels = ni.node.labels
            if n_all:
                for t in aff:
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        affinity_counts[pair] = affinity_counts.get(pair, 0) + n_all
            for j, t in enumerate(anti):
                if n_anti[j]:
                    tv = labels.get(t.topology_key)
                    if tv is not None:
                        pair = (t.topology_key, tv)
                        anti_counts[pair] = anti_counts.get(pair, 0) + n_anti[j]
        return affinity_counts, anti_counts

    def _read_pre_filter(self, state: CycleState) -> tuple[PreFilterState | None, Status | None]:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return None, Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, PreFilterState):
            return None, Status.as_error(f"{s!r}  convert to interpodaffinity.state error")
        return s, None

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        s.update_with_pod(pod_to_add, node, 1)  # type: ignore[union-attr]
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        s.update_with_pod(pod_to_remove, node, -1)  # type: ignore[union-attr]
        return None

    def remove_pod_changes(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> bool:
        s, err = self._read_pre_filter(state)
        return err is not None or s.changes_with(pod_to_remove, node)  # type: ignore[union-attr]

    def removal_check(self, state: CycleState, pod: Pod) -> Callable[[list[Pod], NodeInfo], bool] | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return lambda pods, node: True  # the real RemovePod reports the error
        assert s is not None
        changes_with = s.changes_with
        if s.required_affinity or s.required_anti:
            def changes(pods: list[Pod], node: NodeInfo) -> bool:
                for p in pods:
                    if changes_with(p, node):
                        return True
                return False
            return changes

        def changes_by_anti(pods: list[Pod], node: NodeInfo) -> bool:
            if not node.pods_with_required_anti_affinity:
                return False  # (most nodes) none of its pods has the terms that could count the incoming pod
            for p in pods:
                # without required terms of its own the incoming pod is counted only by others' anti-affinity
                if p.affinity.required_anti and changes_with(p, node):
                    return True
            return False
        return changes_by_anti

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        s, err = self._read_pre_filter(state)
        if err is not None:
            return err
        assert s is not None
        labels = node.node.labels
        if not _satisfy_pod_affinity(s, labels):
            return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_pod_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
        if not _satisfy_existing_pods_anti_affinity(s, labels):
            return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    # ------------------------------------------------------------------ array forms (batched path)
    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        """``filter`` on every node row at once: PreFilter's (topology key, value) counts looked up through
        each key's domain index."""
        s = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(s, PreFilterState):
            return None
        topo = topology_arrays(cols)
        n = cols.n
        arrays = s.arrays if s.arrays is not None and s.arrays.topo is topo else None

        def positive(which: str, key: str) -> np.ndarray:
            if arrays is not None:
                return arrays.positive_at(getattr(arrays, which), key)
            counts = {"affinity": s.affinity_counts, "anti": s.anti_affinity_counts,
                      "existing": s.existing_anti_affinity_counts}[which]
            return _positive_at(topo, counts, key)

        reason = np.zeros(n, dtype=np.int8)  # 0 passes, 1 affinity, 2 anti-affinity, 3 existing anti-affinity
        if s.required_affinity:
            has_all = np.ones(n, dtype=bool)
            exist = np.ones(n, dtype=bool)
            for t in s.required_affinity:
                d = topo.domains(t.topology_key)
                has_all &= d.has
                exist &= positive("affinity", t.topology_key)
            if not s.has_affinity() and pod_matches_all_terms(s.required_affinity, s.pod):  # type: ignore[arg-type]
                exist[:] = True
            reason[~(has_all & exist)] = 1
        if s.required_anti and s.has_anti():
            bad = np.zeros(n, dtype=bool)
            for t in s.required_anti:
                bad |= positive("anti", t.topology_key)
            reason[(reason == 0) & bad] = 2
        if s.has_existing():
            bad = np.zeros(n, dtype=bool)
            keys = arrays.existing if arrays is not None else {k for k, _ in s.existing_anti_affinity_counts}
            for k in keys:
                bad |= positive("existing", k)
            reason[(reason == 0) & bad] = 3

        cache: dict[int, Status] = {}

        def statuses_of(rows: np.ndarray) -> list[Status]:
            return template_statuses(reason[rows], _affinity_status, cache)

        return BatchVerdict(reason == 0, statuses_of)

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns,
                    rows: np.ndarray | slice) -> np.ndarray | None:
        """``score`` of ``rows`` at once: each key's summed weights per domain, looked up per row."""
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState):
            return None
        topo = topology_arrays(cols)
        kept = bool(s.aggregates)
        for agg in s.aggregates:  # (a loop, not all() over a generator: once per scored pod)
            if agg.topo is not topo:
                kept = False
        if kept:
            aggs = s.aggregates
            per_key = aggs[0].weights
            if len(aggs) > 1:
                # the incoming pod's sums and the matched ones often share a key: their weights per domain
                # added first (a few slots, or one per node), then one gather per key instead of one per
                # sum and key (integers: the same totals)
                per_key = dict(per_key)
                for agg in aggs[1:]:
                    for tk, weights in agg.weights.items():
                        prev = per_key.get(tk)
                        per_key[tk] = weights if prev is None else prev + weights  # (a new array)
            total: np.ndarray | None = None
            for tk, weights in per_key.items():
                d = topo.domains(tk)
                if d.identity and not isinstance(rows, slice):
                    got = weights[rows]  # the codes are the rows (hostname): one gather, not two
                else:
                    got = weights[d.ext[rows]]  # a new array (an index array picks)
                if total is None:
                    total = got
                else:
                    total += got
            if total is None:
                total = np.zeros(rows.stop - rows.start if isinstance(rows, slice) else len(rows), dtype=np.int64)
            return total
        out = np.zeros(rows.stop - rows.start if isinstance(rows, slice) else len(rows), dtype=np.int64)
        for part in s.parts:
            for tk, values in part.items():
                d = topo.domains(tk)
                w = np.zeros(d.size + 1, dtype=np.int64)  # the last slot: nodes without the key
                index = d.index
                for tv, v in values.items():
                    code = index.get(tv)
                    if code is not None:
                        w[code] = v
                out += w[d.ext[rows]]
        return out

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        hit = feasible_rows(state, nodes)
        values = self.batch_score(state, pod, hit[0], hit[1]) if hit is not None else None
        if values is not None:
            return values.tolist(), None
        return ScorePlugin.score_nodes(self, state, pod, nodes)

    def batch_normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        """``normalize_score`` on an array of raw scores (batched path): the same float scaling, truncated."""
        arr = np.asarray(scores, dtype=np.int64)
        s = state.read(PRE_SCORE_STATE_KEY)
        if not isinstance(s, PreScoreState) or s.empty() or not len(arr):
            return arr
        # argmin/argmax: less call overhead than min/max reductions; item: the Python int at once (not a
        # NumPy scalar converted)
        lo = arr.item(arr.argmin())
        diff = arr.item(arr.argmax()) - lo
        if diff <= 0:
            return np.zeros(len(arr), dtype=np.int64)
        if lo + diff == 0 and diff <= _TABLE_DIFF:
            # the highest score is 0 (the usual spread: preferred anti-affinity weights alone): the scores
            # -diff .. 0 index a table of each offset's normalized score, worked out once per diff by the
            # same float steps and rolled by one (one gather instead of the float steps' three); the few
            # such spreads recur on most cycles (the kept table read here first: a call spared)
            table = _ROLLED.get(diff)
            return (_rolled_table(diff) if table is None else table)[arr]
        # Other spreads seldom recur (a table of every offset costs more than the float steps on the
        # scored rows, and most would serve one cycle): the float steps on the rows
        if lo == 0:
            f = arr / float(diff)  # float64, as upstream's float64(score-min)/float64(diff)
            np.multiply(f, _MAX_SCORE_F, out=f)  # the same product as MaxNodeScore * fraction
            return f.astype(np.int64)
        k = arr - lo  # (a new array: written over below)
        # the product truncated into ``k`` (the unsafe cast is astype's conversion: toward zero)
        np.multiply(k / float(diff), _MAX_SCORE_F, out=k, casting="unsafe")
        return k

    def normalize_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return self.batch_normalize(state, pod, np.asarray(values, dtype=np.int64)).tolist()

    # ------------------------------------------------------------------ PreScore / Score
    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score iterates the nodes only without a handle (never a RowNodes then))

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        aff = pod.affinity
        has_constraints = bool(aff.preferred_affinity) or bool(aff.preferred_anti)
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.Skip)
        if aff.parse_error:
            return Status.as_error(f"failed to parse pod: {parse_error_message(aff.parse_error)}")
        handle = self.handle
        if handle is not None and handle.batched:
            if not has_constraints and not (
                    self._aff_nodes if self._anti_version == len(handle.snapshot.change_log)
                    and self._held_of is handle.snapshot else self._holders()[0]):  # (``_holders``' first test inline)
                # no node holds a pod with affinity terms: nothing contributes (upstream: Skip)
                return PRE_SCORE_SKIP
            # Two sums kept across cycles: the incoming pod's terms against the nodes' pods (shared by the
            # pods with the same terms) and the nodes' pods' terms against the incoming pod (shared by the
            # pods with the same labels and namespace); their sum is the upstream map.
            cluster = handle.snapshot
            ns_labels = cluster.ns_labels(pod.namespace)  # (``_ns_labels`` with the handle known)
            topo = topology_arrays(columns_for(cluster))  # (once for both sums)
            matched: _DomainSums
            if has_constraints:
                incoming = self._incoming_sums(aff, cluster, topo)
                matched = self._matched_sums(False, pod, ns_labels, cluster, topo)
                if incoming.matches <= 0 and matched.matches <= 0:  # PreScoreState.empty()
                    return PRE_SCORE_SKIP
                parts: tuple[_DomainSums, ...] = (incoming, matched)
            else:
                matched = self._matched_sums(False, pod, ns_labels, cluster, topo)
                if matched.matches <= 0:
                    return PRE_SCORE_SKIP
                parts = (matched,)
            state.write(PRE_SCORE_STATE_KEY, PreScoreState(aggregates=parts))
            return None
        all_nodes = handle.snapshot.node_infos if handle is not None else nodes
        pref = self.resolve_terms(aff.preferred_affinity) if aff.preferred_affinity else []
        pref_anti = self.resolve_terms(aff.preferred_anti) if aff.preferred_anti else []
        ns_labels = self._ns_labels(pod.namespace)
        hard = self.hard_pod_affinity_weight

        # The reference path, node by node: the incoming pod's preferred terms against the node's pods,
        # and the node's pods' terms against the incoming pod (only pods with affinity).
        tables = self._tables()
        incoming_table = None
        if pref or pref_anti:
            incoming_table = tables.table(
                ("prescore-incoming", tuple((_term_sig(t), t.weight) for t in pref),
                 tuple((_term_sig(t), t.weight) for t in pref_anti)))
        existing_table = tables.table(
            ("prescore-existing", pod.namespace, frozenset(pod.labels.items()), frozenset(ns_labels.items()), hard))

        def compute_incoming(ni: NodeInfo) -> dict[str, int]:
            """Per topology key, the summed weights of the incoming pod's preferred terms matching the
            node's pods. A key is present as soon as a term matched, even when the weights cancel
            out (upstream creates the map entry)."""
            out: dict[str, int] = {}
            for ep in ni.pods:
                for t in pref:
                    if term_matches(t, ep, None):
                        out[t.topology_key] = out.get(t.topology_key, 0) + t.weight
                for t in pref_anti:
                    if term_matches(t, ep, None):
                        out[t.topology_key] = out.get(t.topology_key, 0) - t.weight
            return out

        def compute_existing(ni: NodeInfo) -> dict[str, int]:
            """The same for the terms of the node's pods (with affinity) matching the incoming pod."""
            out: dict[str, int] = {}
            for ep in ni.pods_with_affinity:
                ea = ep.affinity
                if hard > 0:
                    for t in ea.required_affinity:
                        if term_matches(t, pod, ns_labels):
                            out[t.topology_key] = out.get(t.topology_key, 0) + hard
                for t in ea.preferred_affinity:
                    if term_matches(t, pod, ns_labels):
                        out[t.topology_key] = out.get(t.topology_key, 0) + t.weight
                for t in ea.preferred_anti:
                    if term_matches(t, pod, ns_labels):
                        out[t.topology_key] = out.get(t.topology_key, 0) - t.weight
            return out

        lookup = NodeValueCache.lookup

        def contribution(ni: NodeInfo) -> list[tuple[str, str, int]]:
            labels = ni.node.labels
            if not labels:
                return []
            parts = []
            if incoming_table is not None and ni.pods:
                parts.append(lookup(incoming_table, ni, compute_incoming))
            if ni.pods_with_affinity:
                parts.append(lookup(existing_table, ni, compute_existing))
            out = []
            for contrib in parts:
                for tk, w in contrib.items():
                    tv = labels.get(tk)
                    if tv is not None:
                        out.append((tk, tv, w))
            return out

        topology_score: dict[str, dict[str, int]] = {}
        if not has_constraints:
            all_nodes = [ni for ni in all_nodes if ni.pods_with_affinity]
        for ni in all_nodes:
            for tk, tv, w in contribution(ni):
                m = topology_score.setdefault(tk, {})
                m[tv] = m.get(tv, 0) + w
        if not topology_score:
            return Status(Code.Skip)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(topology_score))
        return None

    def _incoming_sums(self, aff: PodAffinity, cluster: Any, topo: TopologyArrays) -> _IncomingSums:
        """The pod's preferred terms (of ``aff``) against every node's pods, summed per domain, kept across
        cycles per set of terms (upstream sums every node every cycle; the numbers are the same): only the
        pods that arrived or left since the last use are matched. ``topo``: the arrays of ``cluster``'s
        columns, up to date."""
        events = topo.pod_events(cluster)
        shape = self._shapes.get(id(aff))
        if shape is None or shape[0] is not aff:
            shape = self._incoming_shape(aff)
        key = shape[1]
        entry = self._aggregates.get(key)
        if entry is not None and entry.topo is not topo:
            entry = None  # other node rows: start again
        if entry is None:
            entry = self._aggregates[key] = _IncomingSums(topo, shape[2], cluster, len(events))
            if len(self._aggregates) > _MAX_AGGREGATES:
                self._aggregates.popitem(last=False)
        else:
            self._aggregates.move_to_end(key)
            entry.update(cluster, len(events))
        return entry

    def _incoming_shape(self, aff: PodAffinity) -> tuple[PodAffinity, int, list[tuple[AffinityTerm, int]]]:
        """``aff``, the key of its preferred terms' sums in ``_aggregates`` (one number per signature of
        the resolved terms: what decides their matches, their keys and weights) and those terms with their
        signed weights. Kept per affinity object when no term's namespace selector reads the cluster's
        namespaces (then resolving gives the same terms on every cycle): the pods of one spec share it,
        and the signature, with its selectors' requirements hashed field by field, is worked out once."""
        pref = self.resolve_terms(aff.preferred_affinity) if aff.preferred_affinity else []
        pref_anti = self.resolve_terms(aff.preferred_anti) if aff.preferred_anti else []
        sig = (tuple((_term_sig(t), t.weight) for t in pref), tuple((_term_sig(t), t.weight) for t in pref_anti))
        key = self._key_ids.get(sig)
        if key is None:
            if len(self._key_ids) >= _MAX_SHAPES:
                self._key_ids.clear()  # (the numbers go on: a signature seen again gets a new one)
            key = self._key_ids[sig] = self._next_key
            self._next_key += 1
        shape = (aff, key, [(t, t.weight) for t in pref] + [(t, -t.weight) for t in pref_anti])
        if all(t.namespace_selector.nothing or t.namespace_selector.empty
               for t in (*aff.preferred_affinity, *aff.preferred_anti)):
            if len(self._shapes) >= _MAX_SHAPES:
                self._shapes.clear()
            self._shapes[id(aff)] = shape
        return shape

    def _matched_sums(self, anti: bool, pod: Pod, ns_labels: dict[str, str], cluster: Any,
                      topo: TopologyArrays) -> _MatchedSums:
        """The existing pods' terms that match ``pod`` (PreScore's, or with ``anti`` PreFilter's required
        anti-affinity), summed per domain (upstream sums them node by node every cycle; the numbers are
        the same): the pods' terms are counted once per change of a node (``_ExistingTerms``), the sums
        kept per namespace, labels and namespace labels of the incoming pod. ``topo``: the arrays of
        ``cluster``'s columns, up to date."""
        terms = self._terms[anti]
        kept = self._matched[anti]
        if terms is None or terms.topo is not topo or terms.cluster is not cluster \
                or terms.pos > len(cluster.change_log):
            terms = self._terms[anti] = _ExistingTerms(cluster, topo, self.hard_pod_affinity_weight, anti)
            kept.clear()
        else:
            terms.catch_up()
        # the namespace's labels follow from its name in one cluster (the entries start again with another)
        meta = pod.meta
        key = (meta.namespace, frozenset(meta.labels.items()))
        entry = kept.get(key)
        if entry is None:
            entry = kept[key] = _MatchedSums(terms, pod, ns_labels)
            if len(kept) > _MAX_AGGREGATES:
                kept.popitem(last=False)
        else:
            kept.move_to_end(key)
            entry.update(terms, pod, ns_labels)
        return entry

    def _read_pre_score(self, state: CycleState) -> tuple[PreScoreState | None, Status | None]:
        s = state.read(PRE_SCORE_STATE_KEY)
        if s is None:
            return None, Status.as_error(f'failed to read "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not isinstance(s, PreScoreState):
            return None, Status.as_error(f"{s!r}  convert to interpodaffinity.preScoreState error")
        return s, None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        s, err = self._read_pre_score(state)
        if err is not None:
            return 0, err
        assert s is not None
        labels = node.node.labels
        total = 0
        for tk, values in s.topology_score.items():
            tv = labels.get(tk)
            if tv is not None:
                total += values.get(tv, 0)
        return total, None

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        s, err = self._read_pre_score(state)
        if err is not None:
            return err
        assert s is not None
        if not s.topology_score or not scores:
            return None
        lo = min(ns.score for ns in scores)
        hi = max(ns.score for ns in scores)
        diff = hi - lo
        for ns in scores:
            f = 0.0
            if diff > 0:
                f = float(MAX_NODE_SCORE) * (float(ns.score - lo) / float(diff))
            ns.score = int(f)
        return None

    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status,
                       ctx: WhatIfContext | None = None) -> Change | None:
        """Label the node into a domain with pods the pod needs, evict the pods it must not share a domain
        with and those whose anti-affinity rejects it (see ``inter_pod_what_if``)."""
        return inter_pod_what_if(state, pod, node, status, ctx) if ctx is not None else None


def _affinity_status(kind: int) -> Status:
    if kind == 1:
        return Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH)
    if kind == 2:
        return Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
    return Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)


def _positive_at(topo: TopologyArrays, counts: dict[TopologyPair, int], key: str) -> np.ndarray:
    """Per node row: the node has ``key`` and its (key, value) count is positive."""
    d = topo.domains(key)
    pos = np.zeros(d.size + 1, dtype=bool)  # the last slot: nodes without the key
    index = d.index
    for (k, v), n in counts.items():
        if k == key and n > 0:
            code = index.get(v)
            if code is not None:
                pos[code] = True
    return pos[d.ext]


def _satisfy_pod_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    pods_exist = True
    for t in s.required_affinity:
        tv = labels.get(t.topology_key)
        if tv is None:
            return False  # every topology key must be on the node
        if s.affinity_counts.get((t.topology_key, tv), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    # the first pod of a group that has affinity to itself
    assert s.pod is not None
    return not s.affinity_counts and pod_matches_all_terms(s.required_affinity, s.pod)


def _satisfy_pod_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    if s.anti_affinity_counts:
        for t in s.required_anti:
            tv = labels.get(t.topology_key)
            if tv is not None and s.anti_affinity_counts.get((t.topology_key, tv), 0) > 0:
                return False
    return True


def _satisfy_existing_pods_anti_affinity(s: PreFilterState, labels: Mapping[str, str]) -> bool:
    counts = s.existing_anti_affinity_counts
    if counts:
        if len(counts) < len(labels):
            for (k, v), n in counts.items():
                if n > 0 and labels.get(k) == v:
                    return False
        else:
            for k, v in labels.items():
                if counts.get((k, v), 0) > 0:
                    return False
    return True


PLUGIN = InterPodAffinity


def factory(args: Any, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(handle, args)


# --------------------------------------------------------------------------- what-if
def inter_pod_what_if(state: CycleState, pod: Pod, node: NodeInfo, status: Status, ctx: WhatIfContext) -> Change:
    """The pod's required affinity: label the node into a domain that has matching pods (most matches
    first, checked); its required anti-affinity and existing pods' anti-affinity: evict the pods in the
    node's domains that conflict."""
    change = Change(NAME, INTER_POD, status.message())
    s = state.read(PRE_FILTER_STATE_KEY)
    if not isinstance(s, PreFilterState):
        return change
    labels = node.node.labels
    details: dict[str, Any] = {}
    evict: dict[str, Eviction] = {}
    # the pod's required affinity: a matching pod must run in the node's domain
    if not _satisfy_pod_affinity(s, labels):
        unmet = []
        relabel: dict[str, str] | None = {}
        choices: list[tuple[str, list[str]]] = []  # (topology key, domains with matching pods)
        for t in s.required_affinity:
            tv = labels.get(t.topology_key)
            if tv is not None and s.affinity_counts.get((t.topology_key, tv), 0) > 0:
                continue
            domains = sorted(((v, n) for (k, v), n in s.affinity_counts.items()
                              if k == t.topology_key and n > 0), key=lambda vn: (-vn[1], vn[0]))
            unmet.append({"topology_key": t.topology_key, "value": tv, "selector": selector_text(t.selector),
                          "domains_with_matches": [[v, n] for v, n in domains[:5]],
                          "domains_with_matches_count": len(domains)})
            if domains and relabel is not None and t.topology_key != LABEL_HOSTNAME:
                relabel[t.topology_key] = domains[0][0]
                choices.append((t.topology_key, [v for v, _ in domains[:5]]))
            else:
                # no pod anywhere matches the term, or the domain is a node: no label on this node helps
                relabel = None
        details["affinity"] = unmet
        change.set_labels = relabel or {}
        if relabel:
            _pick_domains(change, node.name, choices, ctx)
    # the pod's required anti-affinity: pods it must not share a domain with
    conflicts = []
    for t in s.required_anti:
        tv = labels.get(t.topology_key)
        if tv is None or s.anti_affinity_counts.get((t.topology_key, tv), 0) <= 0:
            continue
        pods = [(p, other.name) for other in ctx.nodes if other.node.labels.get(t.topology_key) == tv
                for p in other.pods if term_matches(t, p, None)]
        conflicts.append({"topology_key": t.topology_key, "value": tv, "selector": selector_text(t.selector),
                          "pods": sorted(p.key for p, _ in pods)})
        for p, n in pods:
            evict.setdefault(p.key, Eviction(p.key, n, p.priority, p))
    if conflicts:
        details["anti_affinity"] = conflicts
    # existing pods whose required anti-affinity rejects the pod in this node's domains
    existing = []
    for other in ctx.nodes:
        for ep in other.pods_with_required_anti_affinity:
            for t in ep.affinity.required_anti:
                tv = other.node.labels.get(t.topology_key)
                if tv is None or labels.get(t.topology_key) != tv:
                    continue
                if term_matches(t, pod, s.namespace_labels):
                    existing.append({"pod": ep.key, "node": other.name, "topology_key": t.topology_key,
                                     "value": tv, "selector": selector_text(t.selector)})
                    evict.setdefault(ep.key, Eviction(ep.key, other.name, ep.priority, ep))
                    break
    if existing:
        details["existing_anti_affinity"] = existing
    change.details = details
    change.evict = sorted(evict.values(), key=lambda e: (e.priority, e.pod))
    return change


def _pick_domains(change: Change, node: str, choices: list[tuple[str, list[str]]], ctx: WhatIfContext) -> None:
    """Try the domains with matching pods, most matches first, until one flips the checked verdict
    (another domain may hold pods whose anti-affinity rejects the pod)."""
    first = dict(change.set_labels)
    for key_, domains in choices:
        for domain in domains:
            change.set_labels[key_] = domain
            if ctx.check(change, node):
                return
        change.set_labels[key_] = first[key_]
    change.checked = False  # checked again with the evictions, if any, by the caller
