"""The batched (fast) path's plugin protocol: Filter and Score over every node row at once.

A plugin may implement, besides its per-node ``filter`` / ``score``, these optional methods (looked up
by name; nothing to inherit). The per-node methods stay the reference: the batched forms are the same
rules over arrays, and ``tests/test_fastpath.py`` / ``tests/test_differential.py`` require byte-identical
results on both paths (``SimulationOptions(batched=False)`` never calls them).

``batch_filter(self, state, pod, cols) -> BatchVerdict | None``
    The plugin's Filter verdict on every node row of ``cols`` (a ``snapshot.columns.NodeColumns``, rows
    in ``ClusterState.node_infos`` order) after PreFilter ran: ``BatchVerdict.ok[row]`` is True exactly
    when ``filter`` would return Success for that node, and ``BatchVerdict.statuses(rows)`` gives, for
    rejected rows, Status values byte-identical to what ``filter`` returns (code and reasons; the
    framework sets ``plugin``). Rejected statuses may be shared objects (one per distinct reason set):
    callers must not mutate them beyond setting ``plugin`` to this plugin's name. ``statuses`` may be
    asked later in the cycle (when something reads the rejected nodes' statuses): it must describe the
    nodes as they were when the verdict was made (arrays of that moment, or the node objects). Return None to have no
    opinion for this pod (the plugin then runs per node on the rows the others let through); never
    return a verdict when ``filter`` could return an Error for some node.

``batch_score(self, state, pod, cols, rows) -> numpy int64 array | None``
    The raw scores (before NormalizeScore and weighting) of the feasible ``rows`` (an int64 array of
    row numbers, in the feasible list's order), as ``score`` would give them node by node after
    PreScore. None: no opinion, the framework calls ``score_nodes`` / ``score`` per node.

``batch_normalize(self, state, pod, scores) -> numpy int64 array``
    Optional, for plugins with NormalizeScore: the same normalization on an array of raw scores. A
    plugin with NormalizeScore but without it is normalized through ``normalize_values`` (lists) or
    ``normalize_score`` (NodeScore objects).

``batch_constant(self, state, pod, cols) -> int | None``
    Optional: the final (normalized, unweighted) score every node row of ``cols`` gets for this pod, when
    it is one number known without scoring the rows; None otherwise. Only the host choice asks it
    (``Framework.run_score_totals``): a number added to every total changes no choice, so such a plugin
    is left out of the sum; traces and explain still score it (``run_score_arrays``).

``BATCH_SCORES_IN_RANGE`` (class or instance attribute)
    True when ``batch_score`` (then ``batch_normalize``, if any) can only give scores in
    [MinNodeScore, MaxNodeScore]: the framework skips its range check for those arrays (never for
    ``score_nodes``' lists).

``BATCH_SCORE_SPANS`` (class attribute)
    True when ``batch_score`` also takes a ``slice`` of rows for ``rows`` (the feasible rows lie in one
    stretch of rows; the host choice scores the whole stretch through views and drops the rows that are
    not feasible afterwards). Column arrays read through a slice are views: never write into them.

``BATCH_SCORE_OWNED`` (class attribute)
    True when every array ``batch_score`` returns is a new one nobody else holds: the framework may sum
    the other plugins' scores into it instead of copying it first.

``PRE_SCORE_ROWS`` (class attribute)
    True when ``pre_score`` may be handed the batched Filter's feasible nodes as they are found: a
    ``snapshot.columns.RowNodes`` (a read-only sequence of the feasible rows, whose list of ``NodeInfo``
    objects is built only when an item is read; ``feasible_rows`` knows it). Plugins without it get the
    list. The batched host choice reads rows only, so the list is never built when every plugin reads
    rows.

Helpers here: ``BatchVerdict``, ``shape_verdict`` (for plugins whose verdict depends only on the node
object and a signature of what they read from the pod: computed once per pod shape by the plugin's own
``filter`` and cached in the columns) and ``template_statuses`` (shared Status objects per reason set).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pysched.framework.status import Code, Status

if TYPE_CHECKING:
    from pysched.framework.cycle_state import CycleState
    from pysched.model.objects import Pod
    from pysched.snapshot.columns import NodeColumns

StatusesOf = Callable[[np.ndarray], Sequence[Status]]


class BatchVerdict:
    """A Filter plugin's verdict over every node row: ``ok`` (numpy bool array) and the statuses of
    rejected rows, computed only for the rows asked for (``statuses_of(rows)``, one Status per row)."""

    __slots__ = ("ok", "statuses_of")

    def __init__(self, ok: np.ndarray, statuses_of: StatusesOf) -> None:
        self.ok = ok
        self.statuses_of = statuses_of

    def statuses(self, rows: np.ndarray) -> Sequence[Status]:
        return self.statuses_of(rows)

    def status(self, row: int) -> Status:
        """The Status of one rejected row (as ``filter`` returns it for that node)."""
        return self.statuses_of(np.array([row], dtype=np.int64))[0]


_EVERY_ROW = ("batch", "every row passes")


def every_row_passes(cols: NodeColumns) -> np.ndarray:
    """The ``ok`` of a verdict that rejects no node: one shared read-only array per set of columns, so
    that the batched Filter can tell it apart (``ok is every_row_passes(cols)``) and skip it."""
    ok = cols.masks.get(_EVERY_ROW)
    if ok is None:
        ok = cols.masks[_EVERY_ROW] = np.ones(cols.n, dtype=bool)
        ok.flags.writeable = False
    return ok


def no_statuses(plugin: str) -> StatusesOf:
    """The ``statuses_of`` of a verdict that rejects no row: being asked for a row is the caller's bug."""
    def statuses_of(rows: np.ndarray) -> list[Status]:
        if len(rows):
            raise ValueError(f"{plugin}: statuses asked of rows its verdict let through")
        return []
    return statuses_of


def template_statuses(kinds: np.ndarray, make: Callable[[int], Status], cache: dict[int, Status]) -> list[Status]:
    """One shared Status per distinct ``kinds`` value (built by ``make`` once, kept in ``cache``), listed
    per entry of ``kinds``."""
    if len(kinds) == 0:
        return []
    uniq, inverse = np.unique(kinds, return_inverse=True)
    objs = np.empty(len(uniq), dtype=object)
    for i, k in enumerate(uniq.tolist()):
        st = cache.get(k)
        if st is None:
            st = cache[k] = make(k)
        objs[i] = st
    return objs[inverse].tolist()


_SHAPE_CACHE_LIMIT = 4096


def shape_verdict(plugin: Any, state: CycleState, pod: Pod, cols: NodeColumns, sig: object) -> BatchVerdict | None:
    """The verdict of a plugin whose ``filter`` depends only on the node object and ``sig`` (a signature
    of every pod field it reads): its own ``filter`` over every node, once per shape, cached in ``cols``.
    A shape met for the first time gets None (the plugin runs per node on the window): a mask over every
    node pays off only for shapes that come back. Rejected rows' statuses come from ``filter`` itself."""
    key = (id(plugin), sig)
    f = plugin.filter
    mask = cols.masks.get(key)
    if mask is None:
        if key not in cols.seen:
            cols.seen.add(key)
            return None
        if len(cols.masks) > _SHAPE_CACHE_LIMIT:
            cols.masks.clear()
            cols.seen.clear()
        try:
            codes = np.fromiter((0 if (st := f(state, pod, ni)) is None else int(st.code) for ni in cols.infos),
                                dtype=np.int64, count=cols.n)
        except Exception:
            codes = np.full(1, Code.Error, dtype=np.int64)
        if np.isin(codes, _REJECTED_OR_OK, invert=True).any():
            mask = _NO_VERDICT  # an error somewhere: the per-node path reports it
        else:
            mask = codes == Code.Success
        cols.masks[key] = mask
    if mask is _NO_VERDICT:
        return None
    infos = cols.infos

    def statuses_of(rows: np.ndarray) -> list[Status]:
        return [f(state, pod, infos[i]) for i in rows.tolist()]

    return BatchVerdict(mask, statuses_of)


_NO_VERDICT = np.zeros(0, dtype=bool)
_REJECTED_OR_OK = np.array([Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable], dtype=np.int64)


def selector_sig(sel: object) -> object:
    """A hashable signature of a parsed node selector (its terms as the plugin matches them)."""
    if sel is None:
        return None
    return tuple((t.expressions, t.fields, t.valid) for t in sel.terms)  # type: ignore[attr-defined]
