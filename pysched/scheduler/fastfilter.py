"""The batched Filter: every Filter plugin's verdict as a boolean array over all node rows at once
(``batch_filter``, see ``framework/batch.py``), then the same examined window as the sequential loop
(upstream ``findNodesThatPassFilters``: from the rotating start index, until ``numFeasibleNodesToFind``
nodes passed).

Vectorised forms of the same rules, never second semantics: a rejected node's status is the one the
per-node loop would record, i.e. the first plugin in Filter order that rejects it. When every plugin
has a verdict that is the first verdict that says no, its Status taken from the verdict (shared Status
objects per reason set, so no per-node Filter call); plugins without a verdict for this pod run per
node, in the window's order, on the rows the verdicts let through and, for rejected rows, only when
they come before the first rejecting verdict.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pysched.framework.batch import BatchVerdict, every_row_passes
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import NodeToStatus
from pysched.framework.runtime import Framework, plugin_fault, plugin_filter
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import ROWS_KEY, NodeColumns, RowNodes, columns_for
from pysched.snapshot.nodeinfo import NodeInfo

MIN_NODES = 64  # below this the per-node loop is as fast
_REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable)


def batch_verdict(p: object, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
    """The plugin's ``batch_filter`` verdict, None when it has none (or raised: the per-node path reports
    that)."""
    fn = getattr(p, "batch_filter", None)
    if fn is None:
        return None
    try:
        return fn(state, pod, cols)
    except Exception:
        return None  # the per-node path runs the plugin and reports what it raises


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


def _first_rejections(verdicts: list[tuple[int, str, BatchVerdict]], rows: np.ndarray, with_statuses: bool = True
                      ) -> tuple[np.ndarray, np.ndarray]:
    """For rejected ``rows``: the Filter position of the first verdict that rejects each and (with
    ``with_statuses``) its Status, plugin set (an object array aligned with ``rows``)."""
    pos = np.full(len(rows), -1, dtype=np.int64)
    out = np.empty(len(rows) if with_statuses else 0, dtype=object)
    left = np.arange(len(rows))
    for at, name, v in verdicts:
        if not len(left):
            break
        bad = ~v.ok[rows[left]]
        if not bad.any():
            continue
        sel = left[bad]
        pos[sel] = at
        left = left[~bad]
        if not with_statuses:
            continue
        sts = v.statuses(rows[sel])
        for st in sts:  # shared objects get the same name again: cheaper than finding the distinct ones
            st.plugin = name
        out[sel] = np.fromiter(sts, dtype=object, count=len(sel))
    return pos, out


def _wrapped(rows: np.ndarray, more: np.ndarray, start: int, n: int, to_find: int) -> tuple[np.ndarray, int, int]:
    """A window that wraps past the last row: ``rows``, the passing rows from ``start`` to the last one
    (no more than ``to_find``), then as many of ``more``, the passing rows before ``start``, as the window
    still holds; its end (positions examined); and the place of its smallest row (``_window``)."""
    first = len(rows)
    left = to_find - first
    if len(more) > left:
        return np.concatenate((rows, more[:left])), n - start + more.item(left), first if left > 0 else 0
    return np.concatenate((rows, more)), n, first if len(more) else 0


def _window(mask: np.ndarray | None, start: int, n: int, to_find: int) -> tuple[np.ndarray, int, int]:
    """The sequential loop's window over the rows from ``start`` (rotating): the rows of its first
    ``to_find`` passing nodes and its end, the number of positions it examined (it ends before the next
    passing node after the count, else after every node); and the place in the rows of the smallest one
    (``RowNodes.low``: 0 when the rows ascend, else where the window went on at row 0; -1 when not
    worked out). ``mask``: which rows pass (only read); None: every row passes. A stretch a little longer than the window (up to the last row) is searched first,
    the whole rotation (the rows twice over, so that it is one slice) only when it holds too few passing
    nodes."""
    need = to_find + 1
    if mask is None:
        end = to_find if n >= need else n
        return _rotated_rows(n)[start:start + end].copy(), end, n - start if start + end > n else 0
    if n - start < need:
        # fewer rows from start to the last row than the window holds: it goes on at row 0 whatever passes.
        # The passing rows of the whole rotation from one search over every row, split at the start row:
        # those from it, then those before it (one search and no shifted copy instead of two of each)
        found = mask.nonzero()[0]  # 1-D: flatnonzero without its ravel
        at = int(found.searchsorted(start))
        return _wrapped(found[at:], found[:at], start, n, to_find)  # (at most n - start <= to_find from start)
    size = 2 * need + 64
    if start + size >= n:
        # the stretch searched first would reach the last row: one search over every row, split at the
        # start row, as above (its rows need no shift by ``start``, which costs about what searching the
        # rows before the start row does; and a window that goes on at row 0 is not searched twice)
        found = mask.nonzero()[0]
        at = int(found.searchsorted(start))
        if len(found) - at >= need:  # the window ends before the last row: positions are rows - start
            return found[at:at + to_find], found.item(at + to_find) - start, 0
        return _wrapped(found[at:], found[:at], start, n, to_find)
    # the stretch first (it ends before the last row): when it holds the window, positions are rows - start
    found = mask[start:start + size].nonzero()[0]  # 1-D: flatnonzero without its ravel
    if len(found) >= need:
        end = found.item(to_find)
        rows = found[:to_find]
        rows += start
        return rows, end, 0
    found = (np.concatenate((mask, mask))[start:start + n] if start else mask).nonzero()[0]
    if len(found) > to_find:
        end = found.item(to_find)
        found = found[:to_find]
    else:
        end = n
    # window positions to rows: position p is row (start + p) % n
    return (_rotated_rows(n)[start:][found] if start else found), end, -1


_ROTATED: dict[int, np.ndarray] = {}


def _rotated_rows(n: int) -> np.ndarray:
    """0 .. n-1 twice (read only): ``[start:start + n]`` is the window's rows in position order."""
    rows = _ROTATED.get(n)
    if rows is None:
        if len(_ROTATED) > 64:
            _ROTATED.clear()
        one = np.arange(n, dtype=np.int64)
        rows = _ROTATED[n] = np.concatenate((one, one))
        rows.flags.writeable = False
    return rows


def _narrowed(mask: np.ndarray | None, own: bool, ok: np.ndarray) -> tuple[np.ndarray, bool]:
    """``mask`` and ``ok``, and whether the result is this search's own array (then later verdicts are
    combined into it in place; a verdict's own array is never written)."""
    if mask is None:
        return ok, False
    if own:
        np.logical_and(mask, ok, out=mask)
        return mask, True
    return np.logical_and(mask, ok), True


def active_filters(fwk: Framework, skip: set[str] | frozenset[str]) -> list[tuple[int, str, Any, Any, bool]]:
    """``fwk.batch_filters`` without the plugins in ``skip`` (those PreFilter skipped), in Filter order: one
    list per set of skipped plugins, made once and kept by the framework (the pods of one shape skip the
    same plugins; a frozenset of a few names costs less than testing every plugin against the set)."""
    key = frozenset(skip)
    by_skip = fwk.batch_filters_by_skip
    hit = by_skip.get(key)
    if hit is None:
        if len(by_skip) > 256:
            by_skip.clear()
        hit = by_skip[key] = [entry for entry in fwk.batch_filters if entry[1] not in key]
    return hit


def find_feasible(fwk: Framework, cluster: ClusterState, state: CycleState, pod: Pod, statuses: NodeToStatus,
                  start: int, to_find: int, nominated: frozenset[str] = frozenset()) -> RowNodes | None:
    """The feasible nodes of the window over every node, the rejected ones' statuses set in window order;
    None when the per-node loop must decide (then nothing was set). ``nominated``: the nodes with pods
    nominated to them that Filter must count (``Framework.run_filter_with_nominated`` judges those, one
    by one in window order; on every other node it is the plain Filter)."""
    nodes = cluster.node_infos
    n = len(nodes)
    if n < MIN_NODES:
        return None
    cols = columns_for(cluster)
    skip = state.skip_filter_plugins
    everyone = every_row_passes(cols)
    # the rows every verdict lets pass: the one rejecting verdict's own ``ok`` (only read), or this cycle's
    # own array once a second verdict rejects rows (``own``)
    mask: np.ndarray | None = None
    own = False
    verdicts: list[tuple[int, str, BatchVerdict]] = []
    rest: list[tuple[int, object]] = []
    spans: list[tuple[int, str, object]] = []  # plugins whose verdict may be asked for a stretch of rows only
    # the stretch ``_span_window`` asks for must not wrap; when it would, those plugins give their whole-row
    # verdict in Filter order with the others (no late merge)
    stretch = not nominated and start + 2 * (to_find + 1) + 64 < n
    for at, name, p, fn, has_span in active_filters(fwk, skip):
        if stretch and has_span:
            spans.append((at, name, p))
            continue
        v = None  # (batch_verdict, inlined: this runs for every plugin and pod)
        if fn is not None:
            try:
                v = fn(state, pod, cols)
            except Exception:
                v = None  # the per-node path runs the plugin and reports what it raises
        if v is None:
            rest.append((at, p))
            continue
        verdicts.append((at, name, v))
        if v.ok is not everyone:  # (a verdict that rejects no row changes nothing)
            mask, own = _narrowed(mask, own, v.ok)
    nominated_rows = {cols.index[name] for name in nominated if name in cols.index} if nominated else set()
    if spans:
        if not rest and not nominated_rows:
            window = _span_window(state, pod, statuses, cols, verdicts, spans, mask, start, n, to_find)
            if window is not None:
                return window
        # every row's verdict after all (the stretch held too few passing rows, or the window is walked)
        late: list[tuple[int, str, BatchVerdict]] = []
        for at, name, sp in spans:
            v = batch_verdict(sp, state, pod, cols)
            if v is None:
                rest.append((at, sp))
                continue
            late.append((at, name, v))
            if v.ok is not everyone:
                mask, own = _narrowed(mask, own, v.ok)
        if late:
            verdicts = sorted(verdicts + late, key=lambda t: t[0])  # Filter order: the first rejection counts
        if rest:
            rest.sort(key=lambda t: t[0])
    if not verdicts:
        return None  # no plugin has a verdict: the per-node loop is as fast
    if not rest and not nominated_rows:
        rows, end, low = _window(mask, start, n, to_find)
        n_rejected = end - len(rows)
        if n_rejected and mask is not None:  # (every row passes without a mask: nothing rejected)
            judged = mask

            def fill(into: dict[str, Status]) -> None:  # ``mask`` and the verdicts' arrays are never written
                window = _rotated_rows(n)[start:start + end]
                rejected = window[~judged[window]]
                _, sts = _first_rejections(verdicts, rejected)
                into.update(zip(cols.names_arr[rejected].tolist(), sts.tolist(), strict=True))

            statuses.defer(n_rejected, fill)
            feasible = RowNodes(cols, rows, low=low)
        else:  # every node of the window passed (always so without a mask): consecutive rows
            feasible = RowNodes(cols, rows, start=start, low=low)
        state.write(ROWS_KEY, (feasible, rows, cols))
        return feasible
    if mask is None:
        mask = everyone.copy()
    order = np.arange(start, start + n, dtype=np.int64)
    order[n - start:] -= n
    passed = mask[order]
    if not rest:
        return _window_with_nominated(fwk, state, pod, statuses, cols, verdicts, order, passed, to_find,
                                      nominated_rows)
    # Some plugins judge per node: walk the window in order, as the per-node loop does. The verdicts'
    # statuses are fetched afterwards, for the rejected rows of the window only.
    rejected_rows = order[~passed]
    first_at = np.full(n, -1, dtype=np.int64)
    first_at[rejected_rows], _ = _first_rejections(verdicts, rejected_rows, with_statuses=False)
    at_of = first_at.tolist()
    kept: list[int] = []
    walked: list[NodeInfo] = []
    found: list[tuple[str, Status | None]] = []
    from_verdicts: list[tuple[int, int]] = []  # (index in found, row)
    infos = cols.infos
    rest_plugins = [p for _, p in rest]
    for i, ok in zip(order.tolist(), passed.tolist(), strict=True):
        ni = infos[i]
        if i in nominated_rows:
            st = fwk.run_filter_with_nominated(state, pod, ni)
            if st is None or st.code == Code.Success:
                if len(walked) >= to_find:
                    break
                walked.append(ni)
                kept.append(i)
                continue
            if st.code not in _REJECTED:
                return None
        elif ok:
            st = _run_subset(rest_plugins, state, pod, ni)
            if st is None:
                if len(walked) >= to_find:
                    break  # as the cycle: stop on the next feasible node after the count, not kept
                walked.append(ni)
                kept.append(i)
                continue
            if st.code not in _REJECTED:
                return None  # an error: the per-node loop reports it
        else:
            at = at_of[i]
            before = [p for pos, p in rest if pos < at]
            st = _run_subset(before, state, pod, ni) if before else None
            if st is None:
                from_verdicts.append((len(found), i))
            elif st.code not in _REJECTED:
                return None
        found.append((ni.name, st))
    if from_verdicts:
        _, sts = _first_rejections(verdicts, np.array([i for _, i in from_verdicts], dtype=np.int64))
        for (k, _), st in zip(from_verdicts, sts.tolist(), strict=True):
            found[k] = (found[k][0], st)
    statuses.statuses.update(found)  # type: ignore[arg-type]
    out = RowNodes(cols, np.array(kept, dtype=np.int64), walked)
    state.write(ROWS_KEY, (out, out.rows, cols))
    return out


def _span_window(state: CycleState, pod: Pod, statuses: NodeToStatus, cols: NodeColumns,
                 verdicts: list[tuple[int, str, BatchVerdict]], spans: list[tuple[int, str, object]],
                 mask: np.ndarray | None, start: int, n: int, to_find: int) -> RowNodes | None:
    """The window when every plugin has a verdict and nobody is nominated, with the ``spans`` plugins'
    verdicts asked for the stretch ``_window`` searches first only (``start`` .. ``start + 2 * (to_find + 1)
    + 64``, not wrapping): the same rows, end and statuses as the whole-row verdicts. None when the
    stretch wraps, a plugin has no verdict for it, or it holds too few passing rows (then nothing was set)."""
    lo, hi = start, start + 2 * (to_find + 1) + 64
    if hi >= n:
        return None
    local: list[tuple[int, str, BatchVerdict]] = []
    for at, name, p in spans:
        try:
            v = p.batch_filter_span(state, pod, cols, lo, hi)  # type: ignore[attr-defined]
        except Exception:
            v = None  # the per-node path runs the plugin and reports what it raises
        if v is None:
            return None
        local.append((at, name, v))
    comb = local[0][2].ok if mask is None else mask[lo:hi]
    others = [v.ok for _, _, v in local[1:]] if mask is None else [v.ok for _, _, v in local]
    if others:
        comb = np.logical_and(comb, others[0])
        for ok in others[1:]:
            np.logical_and(comb, ok, out=comb)
    found = comb.nonzero()[0]
    if len(found) <= to_find:
        return None
    end = found.item(to_find)
    rows = found[:to_find] + lo
    n_rejected = end - to_find
    if n_rejected:
        # every verdict in Filter order, each with the offset of its rows (the stretch's own or all rows)
        ordered = sorted([(at, name, v, lo) for at, name, v in verdicts] + [(at, name, v, 0) for at, name, v in local],
                         key=lambda t: t[0])
        judged = comb  # only read (it may be a verdict's own array)

        def fill(into: dict[str, Status]) -> None:
            pos = np.flatnonzero(~judged[:end])
            out = np.empty(len(pos), dtype=object)
            left = np.arange(len(pos))
            for _, name, v, off in ordered:
                if not len(left):
                    break
                at_rows = pos[left] + off
                bad = ~v.ok[at_rows]
                if not bad.any():
                    continue
                sel = left[bad]
                sts = v.statuses(pos[sel] + off)
                for st in sts:
                    st.plugin = name
                out[sel] = np.fromiter(sts, dtype=object, count=len(sel))
                left = left[~bad]
            into.update(zip(cols.names_arr[pos + lo].tolist(), out.tolist(), strict=True))

        statuses.defer(n_rejected, fill)
        feasible = RowNodes(cols, rows)
    else:
        feasible = RowNodes(cols, rows, start=lo)
    state.write(ROWS_KEY, (feasible, rows, cols))
    return feasible


def _window_with_nominated(fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus, cols: NodeColumns,
                           verdicts: list[tuple[int, str, BatchVerdict]], order: np.ndarray, passed: np.ndarray,
                           to_find: int, nominated_rows: set[int]) -> RowNodes | None:
    """Every plugin has a verdict, and some nodes hold nominated pods: those rows are judged per node
    (``run_filter_with_nominated``), in window order, only as far as the window reaches (each one may
    move its end); every other row keeps the verdicts' answer. The rejected rows' statuses are deferred
    as on the plain path (set in window order when first read)."""
    n = len(order)
    start = int(order[0])
    judged: dict[int, Status | None] = {}  # window position -> the per-node status of a nominated row
    # Judged in window order: the next one is always the first of ``pending`` not judged yet, and it is
    # judged only while it lies before the window's end (which moves only when a verdict changes).
    pending = sorted((r - start) % n for r in nominated_rows)
    hits = passed.nonzero()[0]
    end = int(hits[to_find]) if len(hits) > to_find else n
    for pos in pending:
        if pos >= end:
            break
        st = fwk.run_filter_with_nominated(state, pod, cols.infos[int(order[pos])])
        if st is not None and st.code != Code.Success and st.code not in _REJECTED:
            return None  # an error: the per-node loop reports it
        judged[pos] = st
        ok = st is None or st.code == Code.Success
        if ok != passed[pos]:
            passed[pos] = ok
            hits = passed.nonzero()[0]
            end = int(hits[to_find]) if len(hits) > to_find else n
    # as the cycle: the window ends before the next feasible node after the count
    hits = hits[:to_find]
    rows = order[hits]
    n_rejected = end - len(hits)
    if n_rejected:
        def fill(into: dict[str, Status]) -> None:  # ``passed`` and ``judged`` are this call's own
            rejected_pos = np.flatnonzero(~passed[:end])
            by_pos = np.empty(n, dtype=object)  # n, not end: a judged row that passed may sit at the end
            if judged:
                own = np.zeros(n, dtype=bool)
                own[list(judged)] = True
                by_verdict = rejected_pos[~own[rejected_pos]]
            else:
                by_verdict = rejected_pos
            if len(by_verdict):
                by_pos[by_verdict] = _first_rejections(verdicts, order[by_verdict])[1]
            for q, st in judged.items():
                if st is not None:
                    by_pos[q] = st
            into.update(zip(cols.names_arr[order[rejected_pos]].tolist(), by_pos[rejected_pos].tolist(),
                            strict=True))

        statuses.defer(n_rejected, fill)
    feasible = RowNodes(cols, rows)
    state.write(ROWS_KEY, (feasible, rows, cols))
    return feasible


def filter_matrix(fwk: Framework, cluster: ClusterState, state: CycleState, pod: Pod, nodes: list[NodeInfo],
                  examined: set[str]) -> dict[str, dict[str, Status]]:
    """``Framework.run_filter_each`` on every examined node (the traced ``filter_all``), in ``nodes``
    order: a plugin with a verdict gives its statuses from it (copies), the others run per node. The
    Success and Skip entries are shared objects (read only)."""
    if not (fwk.handle.batched and nodes is cluster.node_infos and len(nodes) >= MIN_NODES):
        return {ni.name: fwk.run_filter_each(state, pod, ni) for ni in nodes if ni.name in examined}
    cols = columns_for(cluster)
    rows = np.array([i for i, ni in enumerate(nodes) if ni.name in examined], dtype=np.int64)
    names: list[str] = cols.names_arr[rows].tolist()
    infos: list[NodeInfo] = cols.infos_arr[rows].tolist()
    success, skipped = Status(), Status(Code.Skip)
    skip = state.skip_filter_plugins
    plugin_names: list[str] = []
    columns: list[list[Status]] = []
    for p in fwk.filter:
        plugin_names.append(p.name)
        if p.name in skip:
            columns.append([skipped] * len(rows))
            continue
        v = batch_verdict(p, state, pod, cols)
        if v is None:
            col = []
            for ni in infos:
                st = plugin_filter(p, state, pod, ni)
                col.append(st if st is not None else Status())
            columns.append(col)
            continue
        ok = v.ok[rows]
        col = [success] * len(rows)
        bad = np.flatnonzero(~ok)
        if len(bad):
            for k, st in zip(bad.tolist(), v.statuses(rows[bad]), strict=True):
                col[k] = Status(st.code, *st.reasons, error=st.error)
        columns.append(col)
    if not columns:
        return {name: {} for name in names}
    return {name: dict(zip(plugin_names, verdicts, strict=True))
            for name, verdicts in zip(names, zip(*columns, strict=True), strict=True)}
