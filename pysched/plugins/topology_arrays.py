"""Array state of the topology plugins (PodTopologySpread, InterPodAffinity) on the batched path.

Everything here is indexed by node row (``ClusterState.node_infos`` order, as ``NodeColumns``):

- ``Domains``: for one label key, the domain index of every node (-1: the node lacks the key) and the
  domain values in order of first appearance;
- per-node counts of the pods a (selector, namespace) matches (upstream ``countPodsMatchSelector``),
  kept across cycles: after a bind or an eviction only the nodes named in ``ClusterState.change_log``
  since the last use are counted again;
- per-pod-shape node masks (required node affinity, untolerated taints), cached by a signature of what
  they read of the pod.

Nodes (their labels and taints) never change during one simulation; an edited cluster is a new
``ClusterState`` and gets new columns, hence new arrays.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from operator import is_
from typing import TYPE_CHECKING

import numpy as np

from pysched.model.labels import LabelSelector
from pysched.model.objects import Pod
from pysched.snapshot.columns import NodeColumns

if TYPE_CHECKING:
    from pysched.snapshot.cluster import ClusterState

_MAX_COUNTS = 256
_MAX_MASKS = 512


class Domains:
    """The domains of one topology key over the node rows."""

    __slots__ = ("_code_list", "_empty_codes", "_ext", "_identity", "codes", "has", "index", "values")

    def __init__(self, cols: NodeColumns, key: str) -> None:
        index: dict[str, int] = {}
        # the codes gathered in a list, then one array made of it (an item store into an array costs many
        # times a list append); the list is ``code_list`` at once
        code_list: list[int] = []
        append = code_list.append
        for ni in cols.infos:
            v = ni.node.meta.labels.get(key)  # (Node.labels without the property call)
            if v is None:
                append(-1)
                continue
            c = index.get(v)
            if c is None:
                c = index[v] = len(index)
            append(c)
        codes = np.array(code_list, dtype=np.int64)
        self.codes = codes
        self.has = codes >= 0
        self.index = index
        self.values = list(index)
        self._empty_codes: tuple[np.ndarray, int] | None = None
        self._ext: np.ndarray | None = None
        self._code_list: list[int] | None = code_list
        self._identity: bool | None = None

    @property
    def code_list(self) -> list[int]:
        """``codes`` as a list, for reading one row's code at a time (a list item costs a fraction of a
        NumPy element read and its conversion to int)."""
        if self._code_list is None:
            self._code_list = self.codes.tolist()
        return self._code_list

    @property
    def size(self) -> int:
        return len(self.values)

    @property
    def ext(self) -> np.ndarray:
        """Codes with ``size`` for a node lacking the key (index an array of ``size + 1`` slots)."""
        if self._ext is None:
            self._ext = np.where(self.has, self.codes, self.size)
        return self._ext

    @property
    def identity(self) -> bool:
        """Every row has the key and row ``r``'s code is ``r`` (one value per node, first seen in row order:
        the hostname key): ``ext[rows]`` is ``rows`` itself, and an array over the domains is one over the
        rows (plus the empty slot)."""
        if self._identity is None:
            ext = self.ext
            self._identity = bool(np.array_equal(ext, np.arange(len(ext), dtype=ext.dtype)))
        return self._identity

    def codes_or_empty(self) -> tuple[np.ndarray, int]:
        """Codes where a node lacking the key is in the domain ``""`` (``labels.get(key, "")``), and the
        number of codes (one more than ``size`` when no node has the value ``""``)."""
        if self._empty_codes is None:
            empty = self.index.get("")
            n = self.size
            if empty is None:
                empty, n = n, n + 1
            self._empty_codes = (np.where(self.has, self.codes, empty), n)
        return self._empty_codes


class _PerNode:
    __slots__ = ("arrs", "pos")

    def __init__(self, arrs: dict[Hashable, np.ndarray], pos: int) -> None:
        self.arrs = arrs
        self.pos = pos


class _Counts:
    __slots__ = ("arr", "pos")

    def __init__(self, arr: np.ndarray, pos: int) -> None:
        self.arr = arr
        self.pos = pos


def count_matching(pods: list[Pod], selector: LabelSelector, namespace: str) -> int:
    """Upstream ``countPodsMatchSelector`` (an empty selector counts nothing; terminating pods and
    other namespaces are skipped)."""
    if selector.empty:
        return 0
    return sum(1 for p in pods if counted(p, selector, namespace))


def counted(pod: Pod, selector: LabelSelector, namespace: str) -> bool:
    """Whether ``count_matching`` counts ``pod`` (for a selector that is not empty; written out in
    ``TopologyArrays.spread_counts``: a change here goes there too)."""
    meta = pod.meta
    return meta.deletion_timestamp is None and meta.namespace == namespace and selector.matches(meta.labels)


def label_hint(selector: LabelSelector) -> tuple[str, str] | None:
    """A (key, value) label that every pod ``selector`` matches carries (its first one-value ``In``
    requirement), None when it has none."""
    if selector.nothing:
        return None
    for r in selector.requirements:
        if r.op == "In" and len(r.values) == 1:
            return r.key, next(iter(r.values))
    return None


def hint_decides(selector: LabelSelector, hint: tuple[str, str] | None) -> bool:
    """Whether ``selector`` matches every pod that carries ``hint`` (its ``label_hint``): that label is its
    one requirement, so a pod found through the label needs no match."""
    return hint is not None and not selector.nothing and len(selector.requirements) == 1


class _PodEvents:
    """The pods that came onto (+1) or left (-1) each node row since it was made, in ``change_log`` order:
    a bind's pod read off ``ClusterState.change_pods``, the pods that left found by comparing the node's
    pods with those it had when last looked at (a removed pod may be another object with the same key and
    UID than the one named, and it moves the node's last pod into its place). Consumers that keep
    per-node counts replay these, one match per pod that moved, instead of recounting the node's pods.
    ``by_label``: per (key, value) label, the positions of the events whose pod carries it, so that a
    consumer matching a selector replays only the events of pods with a label the selector requires."""

    __slots__ = ("_initial_by_label", "by_label", "events", "initial", "pos", "seen")

    def __init__(self, cluster: ClusterState, cols: NodeColumns) -> None:
        self.pos = len(cluster.change_log)
        self.initial: list[tuple[Pod, ...]] = [tuple(ni.pods) for ni in cols.infos]  # the pods of every row when made
        # per row, its pods as last looked at: a bind appends its pod, a removal has them compared with the
        # node's pods
        self.seen: list[list[Pod]] = [list(pods) for pods in self.initial]
        self._initial_by_label: dict[tuple[str, str], list[tuple[int, Pod, int]]] | None = None
        self.events: list[tuple[int, Pod, int]] = []
        self.by_label: dict[tuple[str, str], list[int]] = {}

    def _append(self, row: int, pod: Pod, d: int) -> None:
        # (written out in ``catch_up`` for a bind: a change here goes there too)
        by_label = self.by_label
        at = len(self.events)
        self.events.append((row, pod, d))
        for kv in pod.meta.labels.items():
            lst = by_label.get(kv)
            if lst is None:
                by_label[kv] = [at]
            else:
                lst.append(at)

    def since(self, start: int, hint: tuple[str, str] | None) -> list[tuple[int, Pod, int]]:
        """The events from position ``start`` on; with ``hint``, only those whose pod carries that label."""
        if hint is None:
            return self.events[start:]
        at = self.by_label.get(hint)
        if not at or at[-1] < start:
            return []
        # (the events picked in C: no bytecode per event)
        return list(map(self.events.__getitem__, at[bisect_left(at, start):]))

    def with_label(self, hint: tuple[str, str]) -> list[tuple[int, Pod, int]]:
        """The pods carrying label ``hint`` as moves from no pods at all: (row, pod, +1) for each such pod
        the rows had when this was made, then the events since of pods with that label. Summed per row
        they give the rows' pods with the label as of the last ``catch_up``, without visiting every row."""
        idx = self._initial_by_label
        if idx is None:
            idx = {}
            for row, pods in enumerate(self.initial):
                for p in pods:
                    for kv in p.meta.labels.items():
                        lst = idx.get(kv)
                        if lst is None:
                            idx[kv] = [(row, p, 1)]
                        else:
                            lst.append((row, p, 1))
            self._initial_by_label = idx
        return idx.get(hint, []) + self.since(0, hint)

    def catch_up(self, cluster: ClusterState, cols: NodeColumns) -> None:
        log = cluster.change_log
        pos = self.pos
        end = len(log)
        if pos >= end:
            return
        index = cols.index
        moved = cluster.change_pods
        events = self.events
        by_label = self.by_label
        seen = self.seen
        synced: set[int] | None = None  # rows compared with the node's pods: up to date with the whole log
        for i in range(pos, end):
            row = index.get(log[i])
            if row is None:
                continue
            p = moved[i]
            if p is None:  # a pod left the node (not always the object named): its pods compared
                if synced is None:
                    synced = set()
                elif row in synced:
                    continue
                synced.add(row)
                self._compare(row, cols.infos[row].pods)
                continue
            if synced is not None and row in synced:
                continue  # (the comparison saw this bind)
            # a bind: its pod was appended to the node's pods, the one event (``_append`` written out: once
            # per bind, the call costs about as much as its body)
            seen[row].append(p)
            at = len(events)
            events.append((row, p, 1))
            for kv in p.meta.labels.items():
                lst = by_label.get(kv)
                if lst is None:
                    by_label[kv] = [at]
                else:
                    lst.append(at)
        self.pos = end

    def _compare(self, row: int, pods: list[Pod]) -> None:
        """The events that turn the row's pods as last seen into ``pods`` (its pods now)."""
        old = self.seen[row]
        if len(old) == len(pods) and all(map(is_, old, pods)):
            return
        was = {id(p) for p in old}
        now = {id(p) for p in pods}
        for p in old:
            if id(p) not in now:
                self._append(row, p, -1)
        for p in pods:
            if id(p) not in was:
                self._append(row, p, 1)
        self.seen[row] = list(pods)


class TopologyArrays:
    """The arrays of one ``NodeColumns`` (one cluster state)."""

    def __init__(self, cols: NodeColumns) -> None:
        self.cols = cols
        self._events: _PodEvents | None = None
        self._domains: dict[str, Domains] = {}
        self._counts: OrderedDict[Hashable, _Counts] = OrderedDict()
        self._masks: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._pod_counts: OrderedDict[Hashable, _PerNode] = OrderedDict()
        self._taint_groups: tuple[np.ndarray, list[tuple]] | None = None
        self._filtering: tuple[list, list[list[int]]] | None = None
        self._untolerated: OrderedDict[Hashable, tuple[np.ndarray, list[object]]] = OrderedDict()
        self._spread: dict[tuple[tuple[str, ...], str], tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
        # (selector key, namespace, keys, key) -> [matching pods per domain code of key over the rows with
        # every key (a list), the position in pod_events it is up to date with]
        self._spread_counts: OrderedDict[Hashable, list] = OrderedDict()
        # (keys, key) -> (per row: it carries every key, its domain code of key; the codes of the domains
        # holding such a row, as lists; whether those are all the codes)
        self._spread_lists: dict[tuple[tuple[str, ...], str], tuple[list[bool], list[int], list[int], bool]] = {}

    def domains(self, key: str) -> Domains:
        d = self._domains.get(key)
        if d is None:
            d = self._domains[key] = Domains(self.cols, key)
        return d

    def pod_events(self, cluster: ClusterState) -> list[tuple[int, Pod, int]]:
        """(node row, pod, +1 arrived / -1 left) since the first call, up to date with ``change_log``; a
        consumer that counted from the nodes' pods at ``len(events)`` replays the events after it."""
        return self._pod_events(cluster).events

    def _pod_events(self, cluster: ClusterState) -> _PodEvents:
        ev = self._events
        if ev is None:
            ev = self._events = _PodEvents(cluster, self.cols)
        elif ev.pos < len(cluster.change_log):  # (catch_up's own test: most calls find nothing new)
            ev.catch_up(cluster, self.cols)
        return ev

    def events_since(self, cluster: ClusterState, start: int, hint: tuple[str, str] | None
                     ) -> list[tuple[int, Pod, int]]:
        """``pod_events(cluster)[start:]``, or with ``hint`` (a label every pod the consumer can count
        carries, see ``label_hint``) only the events of pods with that label."""
        return self._pod_events(cluster).since(start, hint)

    def labelled_pods(self, cluster: ClusterState, hint: tuple[str, str]) -> list[tuple[int, Pod, int]]:
        """The pods on the node rows that carry label ``hint``, up to date with ``change_log``, as
        (row, pod, +1/-1) moves to sum per row (``_PodEvents.with_label``): a first count of the pods a
        selector with that label can match, without visiting every row and pod."""
        return self._pod_events(cluster).with_label(hint)

    def match_counts(self, cluster: ClusterState, selector: LabelSelector, namespace: str,
                     sel_key: Hashable) -> np.ndarray:
        """Per node row, the pods of ``namespace`` on it that ``selector`` matches (not terminating)."""
        key = (sel_key, namespace)
        events = self.pod_events(cluster)
        ent = self._counts.get(key)
        if ent is None:
            arr = np.zeros(self.cols.n, dtype=np.int64)
            if not selector.empty and not selector.nothing:
                hint = label_hint(selector)
                if hint is None:
                    for i, ni in enumerate(self.cols.infos):
                        if ni.pods:
                            arr[i] = count_matching(ni.pods, selector, namespace)
                else:  # count_matching's rule asked only of the pods with a label the selector requires
                    per_row: dict[int, int] = {}
                    for row, p, d in self.labelled_pods(cluster, hint):
                        if counted(p, selector, namespace):
                            per_row[row] = per_row.get(row, 0) + d
                    if per_row:
                        arr[np.fromiter(per_row, dtype=np.int64, count=len(per_row))] = \
                            np.fromiter(per_row.values(), dtype=np.int64, count=len(per_row))
            ent = self._counts[key] = _Counts(arr, len(events))
            if len(self._counts) > _MAX_COUNTS:
                self._counts.popitem(last=False)
            return arr
        self._counts.move_to_end(key)
        if ent.pos < len(events):
            if not selector.empty and not selector.nothing:
                arr = ent.arr
                # count_matching's rule, one moved pod at a time (only pods with a label it requires)
                for row, p, d in self.events_since(cluster, ent.pos, label_hint(selector)):
                    if counted(p, selector, namespace):
                        arr[row] += d
            ent.pos = len(events)
        return ent.arr

    def pod_counts(self, cluster: ClusterState, key: Hashable, classify: Callable[[Pod], Iterable[Hashable]],
                   hint: tuple[str, str] | None = None) -> dict[Hashable, np.ndarray]:
        """Per name, one array over the node rows: how many of the node's pods ``classify`` names it for
        (a pod counts once per name it yields; absent names are 0 everywhere). Kept under ``key`` across
        cycles (``classify`` must depend on nothing but the pod for one key): after binds and evictions
        only the pods that moved (``pod_events``) are classified again. ``hint``: a (key, value) label
        that every pod ``classify`` names anything for carries; the others are not asked."""
        events = self.pod_events(cluster)
        ent = self._pod_counts.get(key)
        n = self.cols.n
        if ent is None:
            arrs: dict[Hashable, np.ndarray] = {}
            if hint is not None:
                for r, p, d in self.labelled_pods(cluster, hint):
                    for name in classify(p):
                        a = arrs.get(name)
                        if a is None:
                            a = arrs[name] = np.zeros(n, dtype=np.int64)
                        a[r] += d
            else:
                for r, ni in enumerate(self.cols.infos):
                    for p in ni.pods:
                        for name in classify(p):
                            a = arrs.get(name)
                            if a is None:
                                a = arrs[name] = np.zeros(n, dtype=np.int64)
                            a[r] += 1
            ent = self._pod_counts[key] = _PerNode(arrs, len(events))
            if len(self._pod_counts) > _MAX_COUNTS:
                self._pod_counts.popitem(last=False)
            return arrs
        self._pod_counts.move_to_end(key)
        if ent.pos < len(events):
            arrs = ent.arrs
            for row, p, d in self.events_since(cluster, ent.pos, hint):
                for name in classify(p):
                    a = arrs.get(name)
                    if a is None:
                        a = arrs[name] = np.zeros(n, dtype=np.int64)
                    a[row] += d
            ent.pos = len(events)
        return ent.arrs

    def spread_rows(self, keys: tuple[str, ...], key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """For the nodes carrying every key of ``keys`` (PodTopologySpread's eligible nodes when no policy
        applies): that mask, their domain codes of ``key`` (one of ``keys``), which domains of ``key`` hold
        one of them, and how many do. Nodes never change during one simulation: kept."""
        hit = self._spread.get((keys, key))
        if hit is None:
            m = self.domains(keys[0]).has
            for k in keys[1:]:
                m = m & self.domains(k).has
            d = self.domains(key)
            codes = d.codes[m]
            present = np.bincount(codes, minlength=d.size) > 0
            if len(self._spread) >= _MAX_MASKS:
                self._spread.clear()
            hit = self._spread[(keys, key)] = (m, codes, present, int(np.count_nonzero(present)))
        return hit

    def spread_counts(self, cluster: ClusterState, selector: LabelSelector, namespace: str, sel_key: Hashable,
                      keys: tuple[str, ...], key: str) -> tuple[list[int], int]:
        """Per domain code of ``key`` (one of ``keys``), the pods of ``namespace`` that ``selector`` matches
        (``match_counts``' rule) on the nodes carrying every key of ``keys`` (``spread_rows``' rows): the
        bincount of ``match_counts`` over those rows, and its smallest entry over the domains holding such
        a node (0 when none does). Kept across cycles: the pods that moved since the last use
        (``pod_events``, only those with a label the selector requires) are counted in one at a time, into
        a list (a list item costs a fraction of an array element). The list is the kept one: callers copy
        what they keep."""
        ent_key = (sel_key, namespace, keys, key)
        ev = self._pod_events(cluster)
        events = ev.events
        ent = self._spread_counts.get(ent_key)
        if ent is None:
            lists = self._spread_lists.get((keys, key))
            if lists is None:
                m, _, present, n_present = self.spread_rows(keys, key)
                lists = self._spread_lists[(keys, key)] = (m.tolist(), self.domains(key).code_list,
                                                            np.flatnonzero(present).tolist(), n_present == len(present))
            m, codes, _, _ = self.spread_rows(keys, key)
            cnt = self.match_counts(cluster, selector, namespace, sel_key)  # (up to date with ``events``)
            tp = np.bincount(codes, weights=cnt[m], minlength=self.domains(key).size).astype(np.int64).tolist()
            # (with the selector's label hint, whether it decides the match, and the rows' lists, read on
            # every later use)
            hint = label_hint(selector)
            ent = self._spread_counts[ent_key] = [tp, len(events), hint, lists, hint_decides(selector, hint)]
            if len(self._spread_counts) > _MAX_COUNTS:
                self._spread_counts.popitem(last=False)
        else:
            self._spread_counts.move_to_end(ent_key)
            if ent[1] < len(events):
                tp = ent[0]
                eligible, code_of = ent[3][0], ent[3][1]
                decided = ent[4]
                for row, p, d in ev.since(ent[1], ent[2]):  # (up to date: caught up above)
                    if eligible[row]:
                        meta = p.meta  # (``counted`` written out: once per pod that moved)
                        if meta.deletion_timestamp is None and meta.namespace == namespace \
                                and (decided or selector.matches(meta.labels)):
                            tp[code_of[row]] += d
                ent[1] = len(events)
        tp, lists = ent[0], ent[3]
        present_codes = lists[2]
        if not present_codes:
            return tp, 0
        # (every domain holding such a row, the usual case: the smallest of the list as it is)
        return tp, (min(tp) if lists[3] else min([tp[c] for c in present_codes]))

    def domain_sums(self, key: str, per_node: np.ndarray) -> np.ndarray:
        """Per domain of ``key``: the sum of ``per_node`` over the nodes in it."""
        d = self.domains(key)
        return np.bincount(d.codes[d.has], weights=per_node[d.has], minlength=d.size).astype(np.int64)

    def required_affinity_mask(self, pod: Pod) -> np.ndarray:
        """Per node row: the pod's nodeSelector and required node affinity match the node (upstream
        ``GetRequiredNodeAffinity(pod).Match``, as ``helper.pod_matches_node_selector_and_affinity``).
        Each requirement reads one label, so it is evaluated once per distinct value of that label."""
        req = pod.node_affinity_required
        # requirements are frozen values: equal ones select the same nodes (hashing them is cheaper than
        # spelling them out)
        sig = ("required-node-affinity", tuple(sorted((pod.node_selector or {}).items())),
               None if req is None else tuple((t.expressions, t.fields, t.valid) for t in req.terms))
        m = self._masks.get(sig)
        if m is not None:
            self._masks.move_to_end(sig)
            return m
        n = self.cols.n
        m = np.ones(n, dtype=bool)
        for k, v in (pod.node_selector or {}).items():
            d = self.domains(k)
            code = d.index.get(v)
            if code is None:
                m[:] = False
            else:
                m &= d.codes == code
        if req is not None:
            any_term = np.zeros(n, dtype=bool)
            for t in req.terms:
                if not t.valid:
                    continue
                tm = np.ones(n, dtype=bool)
                for r in t.expressions:
                    d = self.domains(r.key)
                    lut = np.fromiter((r.matches({r.key: v}) for v in d.values), dtype=bool, count=d.size)
                    lut = np.append(lut, r.matches({}))  # the last slot: nodes without the label
                    tm &= lut[d.ext]
                if t.fields:
                    tm &= np.fromiter((all(r.matches({"metadata.name": ni.name}) for r in t.fields) if ni.name
                                       else True for ni in self.cols.infos), dtype=bool, count=n)
                any_term |= tm
            m &= any_term
        self._masks[sig] = m
        if len(self._masks) > _MAX_MASKS:
            self._masks.popitem(last=False)
        return m

    def taint_groups(self) -> tuple[np.ndarray, list[tuple]]:
        """Per node row, the index of its taint list among the distinct ones (0: no taints)."""
        if self._taint_groups is None:
            index: dict[tuple, int] = {(): 0}
            codes: list[int] = []  # (one array made of the list: see ``Domains``)
            for ni in self.cols.infos:
                t = tuple(ni.node.taints)
                c = index.get(t)
                if c is None:
                    c = index[t] = len(index)
                codes.append(c)
            self._taint_groups = (np.array(codes, dtype=np.int64), list(index))
        return self._taint_groups

    def _filtering_taints(self) -> tuple[list, list[list[int]]]:
        """The distinct NoSchedule/NoExecute taints of the nodes, and per taint list (``taint_groups``) the
        positions among them of its own such taints, in its order."""
        if self._filtering is None:
            _, groups = self.taint_groups()
            index: dict[object, int] = {}
            per_group = [[index.setdefault(t, len(index)) for t in g if t.effect in ("NoSchedule", "NoExecute")]
                         for g in groups]
            self._filtering = (list(index), per_group)
        return self._filtering

    def untolerated(self, tolerations: tuple) -> tuple[np.ndarray, list[object]]:
        """Per node row, the index of its taint list, and per taint list the first NoSchedule/NoExecute
        taint ``tolerations`` do not tolerate (None: tolerated), as ``helper.find_untolerated_taint``."""
        key = ("untolerated", tolerations)
        hit = self._untolerated.get(key)
        if hit is None:
            codes, _ = self.taint_groups()
            distinct, per_group = self._filtering_taints()
            if not tolerations:
                first: list[object] = [distinct[at[0]] if at else None for at in per_group]
            else:  # each distinct taint judged once, then per list its first untolerated one
                bad = [not any(t.tolerates(taint) for t in tolerations) for taint in distinct]
                first = [next((distinct[i] for i in at if bad[i]), None) for at in per_group]
            hit = self._untolerated[key] = (codes, first)
            if len(self._untolerated) > _MAX_MASKS:
                self._untolerated.popitem(last=False)
        else:
            self._untolerated.move_to_end(key)
        return hit

    def tolerated_mask(self, tolerations: tuple) -> np.ndarray:
        """Per node row: no untolerated NoSchedule/NoExecute taint."""
        codes, first = self.untolerated(tolerations)
        return np.array([t is None for t in first], dtype=bool)[codes]

    def node_mask(self, sig: Hashable, verdict: Callable[[object], bool]) -> np.ndarray:
        """A boolean per node row, ``verdict(NodeInfo)``, cached under ``sig``."""
        m = self._masks.get(sig)
        if m is None:
            m = np.fromiter((verdict(ni) for ni in self.cols.infos), dtype=bool, count=self.cols.n)
            self._masks[sig] = m
            if len(self._masks) > _MAX_MASKS:
                self._masks.popitem(last=False)
        else:
            self._masks.move_to_end(sig)
        return m


def topology_arrays(cols: NodeColumns) -> TopologyArrays:
    """The arrays kept beside ``cols`` (built on first use)."""
    t: TopologyArrays | None = getattr(cols, "_pysched_topology", None)
    if t is None or t.cols is not cols:
        t = TopologyArrays(cols)
        cols._pysched_topology = t  # type: ignore[attr-defined]
    return t


def go_round_nonnegative(x: np.ndarray) -> np.ndarray:
    """``go_round_array`` for values >= 0 (fewer steps: no sign to restore)."""
    f = np.floor(x)
    f += (x - f) >= 0.5
    return f.astype(np.int64)


def go_round_array(x: np.ndarray) -> np.ndarray:
    """Go's ``math.Round`` (half away from zero) elementwise, exactly as ``helper.go_round``."""
    a = np.abs(x)
    f = np.floor(a)
    r = np.where(a - f >= 0.5, f + 1.0, f)
    return np.where(x < 0, -r, r).astype(np.int64)
