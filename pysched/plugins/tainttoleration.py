"""TaintToleration: NoSchedule/NoExecute taints filter, PreferNoSchedule taints score."""

from __future__ import annotations

import numpy as np

from pysched.framework.batch import BatchVerdict, every_row_passes, template_statuses
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import (
    MAX_NODE_SCORE,
    FilterPlugin,
    Handle,
    NodeScore,
    PreScorePlugin,
    ScorePlugin,
)
from pysched.framework.status import Status
from pysched.framework.whatif import TAINTS, Change, WhatIfPlugin, taint_dict
from pysched.model.objects import Pod, Toleration, tolerates_taint
from pysched.plugins.helper import (
    default_normalize_array,
    default_normalize_score,
    default_normalize_values,
    find_untolerated_taint,
)
from pysched.plugins.topology_arrays import topology_arrays
from pysched.snapshot.columns import NodeColumns, feasible_rows
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "TaintToleration"
_STATE_KEY = "PreScore" + NAME


def untolerated_reason(key: str, value: str) -> str:
    return f"node(s) had untolerated taint {{{key}: {value}}}"


_FEW_REASONS = 32  # up to this many distinct untolerated taints: every rejected row's Status by one gather
_PREFER_KEY = (NAME, "some node has a PreferNoSchedule taint")
# (length, value) -> a read-only int64 array of that value: constant score columns are slices of these
_CONSTANTS: dict[tuple[int, int], np.ndarray] = {}


def _prefer_count(taints: tuple | list, prefer: tuple[Toleration, ...]) -> int:
    """Score's count: the PreferNoSchedule taints none of ``prefer`` tolerates."""
    count = 0
    for taint in taints:
        if taint.effect != "PreferNoSchedule":
            continue
        if not any(t.tolerates(taint) for t in prefer):
            count += 1
    return count


def _has_prefer_taints(cols: NodeColumns) -> bool:
    """Whether a node of ``cols`` has a PreferNoSchedule taint (nodes never change within one columns
    object); without one, Score counts 0 for every node."""
    hit = cols.masks.get(_PREFER_KEY)
    if hit is None:
        _, lists = topology_arrays(cols).taint_groups()
        hit = cols.masks[_PREFER_KEY] = np.array([any(t.effect == "PreferNoSchedule" for g in lists for t in g)])
    return bool(hit[0])


def _constant_n(n: int, value: int) -> np.ndarray:
    arr = _CONSTANTS.get((n, value))
    if arr is None:
        if len(_CONSTANTS) > 64:
            _CONSTANTS.clear()
        arr = _CONSTANTS[(n, value)] = np.full(n, value, dtype=np.int64)
        arr.flags.writeable = False  # shared: nobody may write into a slice of it
    return arr


def _constant(cols: NodeColumns, value: int) -> np.ndarray:
    return _constant_n(cols.n, value)


class TaintToleration(FilterPlugin, PreScorePlugin, ScorePlugin, WhatIfPlugin):
    NAME = NAME
    HAS_NORMALIZE = True
    BATCH_SCORES_IN_RANGE = True  # counts are >= 0: reversed and scaled to [0, MaxNodeScore]

    def __init__(self) -> None:
        # id of an ``untolerated`` verdict list (kept alive here) -> (that list, the verdict over the node
        # rows made from it); the verdict is only read, its rejected rows' Status objects are built once
        # and shared (``framework/batch.py``: callers set nothing on them but ``plugin``)
        self._ok: dict[int, tuple[list[object], BatchVerdict]] = {}
        # id of a pod's tolerations (kept alive here; pods without any share the empty tuple) -> (them, the
        # columns, the verdict): the columns' taints never change, so neither does the verdict
        self._by_tolerations: dict[int, tuple[tuple, NodeColumns, BatchVerdict]] = {}
        # (the columns, whether a node of theirs has a PreferNoSchedule taint): asked on every host choice
        self._prefer: tuple[NodeColumns, bool] | None = None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        taint = find_untolerated_taint(node.node.taints, pod.tolerations)
        if taint is None:
            return None
        return Status.unresolvable(untolerated_reason(taint.key, taint.value))

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        tolerations = pod.tolerations
        hit = self._by_tolerations.get(id(tolerations))
        if hit is not None and hit[0] is tolerations and hit[1] is cols:
            return hit[2]
        verdict = self._verdict(tolerations, cols)
        if len(self._by_tolerations) > 256:
            self._by_tolerations.clear()
        self._by_tolerations[id(tolerations)] = (tolerations, cols, verdict)
        return verdict

    def _verdict(self, tolerations: tuple, cols: NodeColumns) -> BatchVerdict:
        # nodes grouped by their taint list: the first untolerated taint once per list; a rejected row's
        # status names only that taint's key and value, so rows are grouped by those for their statuses
        groups, first = topology_arrays(cols).untolerated(tolerations)
        hit = self._ok.get(id(first))
        if hit is not None and hit[0] is first:  # one verdict per taint-list verdict (shared, read only)
            return hit[1]
        if len(self._ok) > 256:
            self._ok.clear()
        taints: dict[tuple[str, str], int] = {}
        per_group = [-1 if t is None else taints.setdefault((t.key, t.value), len(taints))  # type: ignore[attr-defined]
                     for t in first]
        kinds = np.array(per_group, dtype=np.int64)[groups]
        # a verdict that rejects no row is the shared one the batched Filter skips
        ok = every_row_passes(cols) if not taints else kinds < 0
        reasons = list(taints)
        cache: dict[int, Status] = {}

        def status(k: int) -> Status:
            return Status.unresolvable(untolerated_reason(*reasons[k]))

        if len(reasons) > _FEW_REASONS:
            verdict = BatchVerdict(ok, lambda rows: template_statuses(kinds[rows], status, cache))
        else:
            shared: list[np.ndarray] = []

            def statuses_of(rows: np.ndarray) -> list[Status]:
                # few reasons: one shared Status per reason (as template_statuses shares them), built on
                # the first ask, then one gather by the rows' reason instead of sorting them
                if not shared:
                    objs = np.empty(len(reasons), dtype=object)
                    objs[:] = [status(k) for k in range(len(reasons))]
                    shared.append(objs)
                return shared[0][kinds[rows]].tolist()

            verdict = BatchVerdict(ok, statuses_of)
        self._ok[id(first)] = (first, verdict)
        return verdict

    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads no node)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        tolerations = pod.tolerations
        prefer = tuple(t for t in tolerations if t.effect in ("", "PreferNoSchedule")) if tolerations else ()
        state.write(_STATE_KEY, prefer)
        return None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        prefer = state.read(_STATE_KEY)
        if prefer is None:
            return 0, Status.as_error(f'reading "{_STATE_KEY}" from cycleState: not found')
        return _prefer_count(node.node.taints, prefer), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """On the fast path: the counts depend only on the node's taints and the pod's tolerations, so each
        node is counted once per toleration shape and looked up by row."""
        prefer = state.read(_STATE_KEY)
        rows = feasible_rows(state, nodes)
        if prefer is None or rows is None:
            return ScorePlugin.score_nodes(self, state, pod, nodes)
        cols, idx = rows
        return self.batch_score(state, pod, cols, idx).tolist(), None  # type: ignore[union-attr]

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        """The counts depend only on the node's taints and the pod's tolerations: counted once per
        distinct taint list for each toleration shape, spread over the node rows, looked up by row."""
        prefer = state.read(_STATE_KEY)
        if prefer is None:
            return None
        if not _has_prefer_taints(cols):  # every count is 0 whatever the tolerations
            return _constant(cols, 0)[:len(rows)]
        key = (NAME, "score", prefer)  # the tolerations themselves (frozen values) as the shape
        counts = cols.masks.get(key)
        if counts is None:
            groups, lists = topology_arrays(cols).taint_groups()
            per_list = np.array([_prefer_count(taints, prefer) for taints in lists], dtype=np.int64)
            counts = cols.masks[key] = per_list[groups]
        return counts[rows]

    def batch_constant(self, state: CycleState, pod: Pod, cols: NodeColumns) -> int | None:
        """No node has a PreferNoSchedule taint: every count is 0, every normalized score MaxNodeScore."""
        if state.read(_STATE_KEY) is None:
            return None
        hit = self._prefer
        if hit is None or hit[0] is not cols:
            hit = self._prefer = (cols, _has_prefer_taints(cols))
        return None if hit[1] else MAX_NODE_SCORE

    def batch_normalize(self, state: CycleState, pod: Pod, scores: np.ndarray) -> np.ndarray:
        zeros = scores.base
        if zeros is not None and zeros is _CONSTANTS.get((len(zeros), 0)):
            # batch_score's all-zero column: normalized (reversed, max 0) every node scores MaxNodeScore
            return _constant_n(len(zeros), MAX_NODE_SCORE)[:len(scores)]
        return default_normalize_array(MAX_NODE_SCORE, True, scores)

    def normalize_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        return default_normalize_values(MAX_NODE_SCORE, True, values)

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    # ------------------------------------------------------------------ what-if
    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change:
        """Tolerate every taint the pod does not (NoSchedule and NoExecute)."""
        untolerated = [t for t in node.node.taints if t.effect in ("NoSchedule", "NoExecute")
                       and not tolerates_taint(pod.tolerations, t)]
        return Change(NAME, TAINTS, status.message(), details={"taints": [taint_dict(t) for t in untolerated]},
                      add_tolerations=[Toleration(t.key, "Equal", t.value, t.effect) if t.value
                                       else Toleration(t.key, "Exists", "", t.effect) for t in untolerated])


PLUGIN = TaintToleration


def factory(args: None, handle: Handle) -> TaintToleration:
    return TaintToleration()
