"""The framework of one profile: its plugins per extension point and how each point runs them
(upstream ``framework/runtime/framework.go``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pysched.errors import ConfigError, PyschedError
from pysched.framework.config import ProfileConfig
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    FilterPlugin,
    Handle,
    NodeScore,
    NodeToStatus,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from pysched.framework.registry import Registry
from pysched.framework.status import Code, Status
from pysched.snapshot.columns import RowNodes, feasible_rows, node_list

if TYPE_CHECKING:
    from pysched.model.objects import Pod
    from pysched.snapshot.nodeinfo import NodeInfo

_REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)
# Code.Skip read once: on Python 3.11 reading an enum member off its class costs about 1,000 instructions
# (EnumType.__getattr__ sends every attribute read of the class through the slow hook)
_SKIP = Code.Skip
_INT64 = np.dtype(np.int64)  # (NumPy's one int64 descriptor: arrays of that type hold this very object)


def _out_of_range(name: str, values: list[int]) -> Status | None:
    if values and (max(values) > MAX_NODE_SCORE or min(values) < MIN_NODE_SCORE):
        bad = next(v for v in values if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE)
        return Status(Code.Error, error=f'plugin "{name}" returns an invalid score {bad}, '
                                        f'it should in the range of [{MIN_NODE_SCORE}, '
                                        f'{MAX_NODE_SCORE}] after normalizing')
    return None


def _beyond_range(arr: np.ndarray) -> bool:
    """Some score outside [MIN_NODE_SCORE, MAX_NODE_SCORE]. For int64 arrays one reduction: seen as
    unsigned, a negative value is larger than any score."""
    if MIN_NODE_SCORE == 0 and arr.dtype == np.int64:
        u = arr.view(np.uint64)
        return u.item(u.argmax()) > MAX_NODE_SCORE  # argmax: less call overhead than a max reduction
    return int(arr.max()) > MAX_NODE_SCORE or int(arr.min()) < MIN_NODE_SCORE


def plugin_fault(plugin: str, point: str, pod: Pod, exc: BaseException, node: str | None = None) -> Status:
    """A plugin that raised becomes an Error status naming the plugin, the pod and the node."""
    where = f" on node {node}" if node else ""
    return Status(Code.Error, error=f"plugin {plugin} raised in {point} for pod {pod.key}{where}: "
                                   f"{type(exc).__name__}: {exc}").with_plugin(plugin)


def filters_with(nominated: Pod, pod: Pod) -> bool:
    """Whether ``pod``'s Filter counts ``nominated`` on its node: upstream adds the pods nominated there of
    equal or higher priority, other than the pod itself."""
    return nominated.priority >= pod.priority and nominated.uid != pod.uid


def plugin_filter(p: FilterPlugin, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
    """One Filter plugin alone on ``node``; what it raises comes back as its fault status."""
    try:
        return p.filter(state, pod, node)
    except Exception as exc:
        return plugin_fault(p.name, "Filter", pod, exc, node.name)


class _ScoreStep:
    """A Score plugin as ``run_score_arrays`` calls it: its optional batched methods looked up once."""

    __slots__ = ("batch", "batch_normalize", "constant", "has_normalize", "in_range", "name", "owned", "plugin",
                 "span_sum", "spans", "weight", "weight0")

    def __init__(self, p: ScorePlugin, weight: int) -> None:
        self.plugin = p
        self.name = p.name
        self.weight = weight
        # the weight as a 0-d int64 array (read only) for the summing steps: NumPy multiplies an array by a
        # Python int at more than half again the cost (its scalar conversion); the same products
        self.weight0 = np.array(weight, dtype=np.int64) if -(1 << 62) < weight < (1 << 62) else weight
        if isinstance(self.weight0, np.ndarray):
            self.weight0.flags.writeable = False
        self.batch = getattr(p, "batch_score", None)
        self.has_normalize = p.HAS_NORMALIZE
        self.batch_normalize = getattr(p, "batch_normalize", None)
        self.constant = getattr(p, "batch_constant", None)
        self.in_range = bool(getattr(p, "BATCH_SCORES_IN_RANGE", False))
        self.spans = self.batch is not None and bool(getattr(p, "BATCH_SCORE_SPANS", False))
        self.owned = self.batch is not None and bool(getattr(p, "BATCH_SCORE_OWNED", False))
        # run_score_totals sums its batch_score of a span of rows as it is: scores in range, not normalized
        self.span_sum = self.spans and self.in_range and not self.has_normalize


class Framework:
    # (the plugin list these were made from, [(name, its bound PreFilter / PreScore method, ...)]): looked
    # up once, not per plugin and cycle; made again when the list is another (tests assemble frameworks)
    _pre_filter_calls: tuple[list[PreFilterPlugin], list[tuple[str, Any]]] | None = None
    _pre_score_calls: tuple[list[PreScorePlugin], list[tuple[str, Any, bool]]] | None = None

    def __init__(self, profile: ProfileConfig, registry: Registry, handle: Handle) -> None:
        self.profile = profile
        self.handle = handle
        handle.framework = self
        self.instances: dict[str, Plugin] = {}
        for name in profile.all_plugin_names():
            spec = registry.get(name)
            if spec is None:
                raise ConfigError(f"plugin {name!r} is not registered", field=f"profile {profile.scheduler_name}")
            try:
                self.instances[name] = spec.factory(profile.plugin_args.get(name), handle)
            except PyschedError:
                raise
            except Exception as exc:
                raise PyschedError(f"plugin {name} ({spec.source}) failed to start in profile "
                                   f"{profile.scheduler_name}: {type(exc).__name__}: {exc}") from exc

        def take(point: str, base: type) -> list[Any]:
            out = []
            for ref in profile.enabled(point):
                inst = self.instances[ref.name]
                if not isinstance(inst, base):
                    raise ConfigError(f"plugin {ref.name!r} does not extend {point}",
                                      field=f"profile {profile.scheduler_name}")
                out.append(inst)
            return out

        self.pre_enqueue: list[PreEnqueuePlugin] = take("preEnqueue", PreEnqueuePlugin)
        self.queue_sort: list[QueueSortPlugin] = take("queueSort", QueueSortPlugin)
        self.pre_filter: list[PreFilterPlugin] = take("preFilter", PreFilterPlugin)
        self.filter: list[FilterPlugin] = take("filter", FilterPlugin)
        self.post_filter: list[PostFilterPlugin] = take("postFilter", PostFilterPlugin)
        self.pre_score: list[PreScorePlugin] = take("preScore", PreScorePlugin)
        self.score: list[ScorePlugin] = take("score", ScorePlugin)
        self.score_weights: dict[str, int] = {r.name: (r.weight or 1) for r in profile.enabled("score")}
        # the largest total score a node can get (every plugin's range-checked score times its weight)
        self.max_total_score = sum(abs(self.score_weights.get(p.name, 1)) for p in self.score) * MAX_NODE_SCORE
        self._score_steps = [_ScoreStep(p, self.score_weights.get(p.name, 1)) for p in self.score]
        self.reserve: list[ReservePlugin] = take("reserve", ReservePlugin)
        self.permit: list[PermitPlugin] = take("permit", PermitPlugin)
        self.pre_bind: list[PreBindPlugin] = take("preBind", PreBindPlugin)
        self.bind: list[BindPlugin] = take("bind", BindPlugin)
        self.post_bind: list[PostBindPlugin] = take("postBind", PostBindPlugin)
        self.filter_names = [p.name for p in self.filter]
        self._filter_fns = [(p.name, p.filter) for p in self.filter]
        # the batched Filter's view of each Filter plugin, looked up once: (position, name, plugin, its
        # batch_filter or None, whether it has batch_filter_span)
        self.batch_filters: list[tuple[int, str, Any, Any, bool]] = [
            (at, p.name, p, getattr(p, "batch_filter", None), hasattr(p, "batch_filter_span"))
            for at, p in enumerate(self.filter)]
        # set of plugins PreFilter skipped -> ``batch_filters`` without them (``fastfilter.active_filters``)
        self.batch_filters_by_skip: dict[frozenset[str], list[tuple[int, str, Any, Any, bool]]] = {}
        self.pre_filter_with_extensions = [p for p in self.pre_filter if p.HAS_EXTENSIONS]

    @property
    def profile_name(self) -> str:
        return self.profile.scheduler_name

    def percentage_of_nodes_to_score(self) -> int | None:
        return self.profile.percentage_of_nodes_to_score

    def has_scoring(self) -> bool:
        return bool(self.score)

    # ------------------------------------------------------------------ PreEnqueue / QueueSort
    def run_pre_enqueue(self, pod: Pod) -> Status | None:
        for p in self.pre_enqueue:
            try:
                st = p.pre_enqueue(pod)
            except Exception as exc:
                return plugin_fault(p.name, "PreEnqueue", pod, exc)
            if st is not None and st.code != Code.Success:
                return st.with_plugin(p.name)
        return None

    # ------------------------------------------------------------------ PreFilter
    def run_pre_filter(self, state: CycleState, pod: Pod,
                       nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None, list[str]]:
        """Returns (merged result, status, plugins that returned a node set)."""
        result: PreFilterResult | None = None
        returned_sets: list[str] = []
        remembered: Status | None = None
        skipped = state.skip_filter_plugins
        calls = self._pre_filter_calls
        if calls is None or calls[0] is not self.pre_filter:
            calls = self._pre_filter_calls = (self.pre_filter, [(p.name, p.pre_filter) for p in self.pre_filter])
        skip = _SKIP
        for name, pre_filter in calls[1]:
            try:
                r, st = pre_filter(state, pod, nodes)
            except Exception as exc:
                return None, plugin_fault(name, "PreFilter", pod, exc), returned_sets
            if st is None:
                pass
            elif st.code == skip:  # (may be a shared Status: only its code is read)
                skipped.add(name)
                continue
            elif st.code != Code.Success:
                st.plugin = name
                if st.code == Code.UnschedulableAndUnresolvable:
                    return None, st, returned_sets
                if st.code == Code.Unschedulable:
                    if remembered is None:
                        remembered = st
                    continue
                err = Status(Code.Error, error=f'running PreFilter plugin "{name}": {st.message()}')
                return None, err.with_plugin(name), returned_sets
            if r is not None and not r.all_nodes():
                returned_sets.append(name)
                result = r if result is None else result.merge(r)
                if not result.node_names:
                    if len(returned_sets) == 1:
                        msg = f"node(s) didn't satisfy plugin {returned_sets[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(returned_sets))}] simultaneously"
                    return None, Status.unresolvable(msg).with_plugin(name), returned_sets
        return result, remembered, returned_sets

    def run_pre_filter_add_pod(self, state: CycleState, pod: Pod, to_add: Pod, node: NodeInfo) -> Status | None:
        for p in self.pre_filter_with_extensions:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.add_pod(state, pod, to_add, node)
            if st is not None and st.code != Code.Success:
                return Status(Code.Error, error=f'running AddPod on PreFilter plugin "{p.name}": {st.message()}')
        return None

    def run_pre_filter_remove_pod(self, state: CycleState, pod: Pod, to_remove: Pod,
                                  node: NodeInfo) -> Status | None:
        for p in self.pre_filter_with_extensions:
            if p.name in state.skip_filter_plugins:
                continue
            st = p.remove_pod(state, pod, to_remove, node)
            if st is not None and st.code != Code.Success:
                return Status(Code.Error, error=f'running RemovePod on PreFilter plugin "{p.name}": {st.message()}')
        return None

    def removal_checks(self, state: CycleState, pod: Pod) -> list[Callable[[list[Pod], NodeInfo], bool]]:
        """The non-skipped PreFilter plugins' ``removal_check`` functions (those that may say yes): removing
        pods from a node changes ``state`` when one of them says so."""
        out = []
        for p in self.pre_filter_with_extensions:
            if p.name not in state.skip_filter_plugins:
                check = p.removal_check(state, pod)
                if check is not None:
                    out.append(check)
        return out

    # ------------------------------------------------------------------ Filter
    def run_filter(self, state: CycleState, pod: Pod, node: NodeInfo,
                   active: list[tuple[str, Any]] | None = None) -> Status | None:
        """Filter plugins in order, stopping at the first non-success (PreFilter-skipped ones left out);
        ``active``: only these (name, filter) pairs, in this order."""
        if active is None:
            active = state.active_filters
        if active is None:
            skip = state.skip_filter_plugins
            active = state.active_filters = [(n, fn) for n, fn in self._filter_fns if n not in skip]
        for name, fn in active:
            try:
                st = fn(state, pod, node)
            except Exception as exc:
                return plugin_fault(name, "Filter", pod, exc, node.name)
            if st is not None and st.code != Code.Success:
                if st.code not in _REJECTED:
                    return Status(Code.Error, error=f'running "{name}" filter plugin: {st.message()}'
                                  ).with_plugin(name)
                st.plugin = name
                return st
        return None

    def run_filter_each(self, state: CycleState, pod: Pod, node: NodeInfo) -> dict[str, Status]:
        """Every Filter plugin alone on the node (the ``filter_all`` trace); Skip for PreFilter-skipped."""
        out: dict[str, Status] = {}
        for p in self.filter:
            if p.name in state.skip_filter_plugins:
                out[p.name] = Status(Code.Skip)
                continue
            st = plugin_filter(p, state, pod, node)
            out[p.name] = st if st is not None else Status()
        return out

    def add_nominated_pods(self, state: CycleState, pod: Pod,
                           node: NodeInfo) -> tuple[bool, CycleState, NodeInfo, Status | None]:
        nominated = self.handle.snapshot.nominated_pods_for(node.name)
        if not nominated:
            return False, state, node, None
        added = False
        node_out = node
        state_out = state
        for nom in nominated:
            if filters_with(nom, pod):
                if not added:
                    node_out = node.clone()
                    state_out = state.clone()
                    added = True
                node_out.add_pod(nom)
                st = self.run_pre_filter_add_pod(state_out, pod, nom, node_out)
                if st is not None:
                    return False, state, node, st
        return added, state_out, node_out, None

    def run_filter_with_nominated(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        """Upstream ``RunFilterPluginsWithNominatedPods``: first with the higher/equal-priority pods
        nominated to the node added; when any were added and that passed, once more without them."""
        added, state_nom, node_nom, err = self.add_nominated_pods(state, pod, node)
        if err is not None:
            return err
        st = self.run_filter(state_nom, pod, node_nom)
        if (st is not None and st.code != Code.Success) or not added:
            return st
        return self.run_filter(state, pod, node)

    # ------------------------------------------------------------------ PostFilter
    def run_post_filter(self, state: CycleState, pod: Pod,
                        statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status]:
        reasons: list[str] = []
        result: PostFilterResult | None = None
        last_plugin = ""
        for p in self.post_filter:
            try:
                r, st = p.post_filter(state, pod, statuses)
            except Exception as exc:
                return None, plugin_fault(p.name, "PostFilter", pod, exc)
            if st is None or st.code == Code.Success:
                return r, Status().with_plugin(p.name)
            st.plugin = p.name
            if st.code == Code.UnschedulableAndUnresolvable or st.code == Code.Error:
                return r, st
            if st.code != Code.Unschedulable:
                return r, st
            reasons.extend(st.reasons)
            if r is not None:
                result = r
            last_plugin = p.name
        return result, Status(Code.Unschedulable, *reasons).with_plugin(last_plugin)

    # ------------------------------------------------------------------ PreScore / Score
    def run_pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """``nodes``: a list, or the fast filter's ``RowNodes`` (handed as they are to the plugins that
        declare ``PRE_SCORE_ROWS``, see ``framework/batch.py``; the others get its list)."""
        rows = isinstance(nodes, RowNodes)
        calls = self._pre_score_calls
        if calls is None or calls[0] is not self.pre_score:
            calls = self._pre_score_calls = (self.pre_score, [
                (p.name, p.pre_score, bool(getattr(p, "PRE_SCORE_ROWS", False))) for p in self.pre_score])
        skip = _SKIP
        for name, pre_score, takes_rows in calls[1]:
            try:
                st = pre_score(state, pod, node_list(nodes) if rows and not takes_rows
                               else nodes)
            except Exception as exc:
                return plugin_fault(name, "PreScore", pod, exc)
            if st is not None:
                if st.code == skip:
                    state.skip_score_plugins.add(name)
                    continue
                if st.code != Code.Success:
                    return Status(Code.Error, error=f'running PreScore plugin "{name}": {st.message()}'
                                  ).with_plugin(name)
        return None

    def run_score(self, state: CycleState, pod: Pod,
                  nodes: list[NodeInfo]) -> tuple[dict[str, list[int]], Status | None]:
        """Weighted, normalized scores per plugin, aligned with ``nodes`` (plugins whose PreScore
        skipped are absent)."""
        if self.handle.batched:
            arrays, st = self.run_score_arrays(state, pod, nodes)
            return {k: v.tolist() for k, v in arrays.items()}, st
        out: dict[str, list[int]] = {}
        for p in self.score:
            name = p.name
            if name in state.skip_score_plugins:
                continue
            try:
                values, st = ScorePlugin.score_nodes(p, state, pod, nodes)
            except Exception:
                return out, self._locate_score_fault(p, state, pod, nodes)
            if st is not None and st.code != Code.Success:
                return out, Status(Code.Error, error=f'running Score plugins: plugin "{name}" '
                                                     f'failed with: {st.message()}').with_plugin(name)
            if p.HAS_NORMALIZE:
                scores = [NodeScore(n.name, v) for n, v in zip(nodes, values, strict=True)]
                try:
                    st = p.normalize_score(state, pod, scores)
                except Exception as exc:
                    return out, plugin_fault(name, "NormalizeScore", pod, exc)
                if st is not None and st.code != Code.Success:
                    return out, Status(Code.Error, error=f'running Normalize on Score plugins: plugin '
                                                         f'"{name}" failed with: {st.message()}')
                values = [ns.score for ns in scores]
            bad_st = _out_of_range(name, values)
            if bad_st is not None:
                return out, bad_st
            weight = self.score_weights.get(name, 1)
            out[name] = [v * weight for v in values] if weight != 1 else list(values)
        return out, None

    def run_score_arrays(self, state: CycleState, pod: Pod,
                         nodes: list[NodeInfo]) -> tuple[dict[str, np.ndarray], Status | None]:
        """``run_score`` on the batched path: int64 arrays aligned with ``nodes``. A plugin's
        ``batch_score`` is used when the nodes are the feasible rows the batched Filter found (see
        ``framework/batch.py``), else its ``score_nodes``; normalization through ``batch_normalize``,
        else ``normalize_values``, else ``normalize_score``."""
        out: dict[str, np.ndarray] = {}
        hit = feasible_rows(state, nodes)
        skip = state.skip_score_plugins
        for step in self._score_steps:
            if step.name in skip:
                continue
            arr, st = self._score_array(step, state, pod, nodes, hit)
            if arr is None:
                return out, st
            w = step.weight
            out[step.name] = arr * w if w != 1 else arr
        return out, None

    def run_score_totals(self, state: CycleState, pod: Pod,
                         nodes: Sequence[NodeInfo]) -> tuple[np.ndarray | None, Status | None]:
        """What the host choice reads on the batched path: the sum of ``run_score_arrays``' weighted
        arrays (a new array), the same errors. A plugin whose score is one known number on every row
        (``batch_constant``) adds nothing to compare and is left out of the sum (it is still range-checked).
        None: no plugin scored a row differently from another, every total is the same.

        When the feasible rows lie in one stretch of rows without wrapping (``lo .. hi``, window order is
        row order) and are at least half of it, or the window wrapped and they are at least a quarter of
        all rows (then the stretch is every row), plugins that take a row span (``BATCH_SCORE_SPANS``) score
        the whole stretch through slices (views, no gathers); the rows that are not feasible are dropped
        once at the end (normalizing plugins: before normalizing, as the plugin's range is the feasible
        rows')."""
        hit = feasible_rows(state, nodes)
        skip = state.skip_score_plugins
        span: slice | None = None
        offsets: np.ndarray | None = None
        if hit is not None:
            rows = hit[1]
            k = len(rows)
            lo, hi = rows.item(0), rows.item(-1) + 1
            if lo < hi <= lo + 2 * k:
                span = slice(lo, hi)
                if hi - lo != k:
                    offsets = rows - lo
            elif hi <= lo and hit[0].n <= 4 * k:
                # the window wrapped past the last row: when the feasible rows are a quarter of all rows or
                # more, every row is scored through views and the feasible ones picked once at the end
                # (fewer array calls than a gather per column)
                span = hit[0].all_rows  # (this very object: the columns' plugins can tell every row from it)
                offsets = rows
        total: np.ndarray | None = None  # aligned with nodes
        span_total: np.ndarray | None = None  # aligned with the span
        for step in self._score_steps:
            if step.name in skip:
                continue
            if step.constant is not None and hit is not None:
                v = step.constant(state, pod, hit[0])
                if v is not None:
                    if v > MAX_NODE_SCORE or v < MIN_NODE_SCORE:
                        return None, _out_of_range(step.name, [v])
                    continue
            w = step.weight
            if span is not None and step.span_sum:
                try:
                    arr = step.batch(state, pod, hit[0], span)  # type: ignore[index,misc]
                except Exception:
                    return None, self._locate_score_fault(step.plugin, state, pod, nodes)
                if arr is not None:
                    if span_total is None:  # (the first owned array is summed into as it is: no copy)
                        span_total = arr if w == 1 and step.owned else _add_weighted(None, arr, w, step.weight0)
                    elif w == 1:  # (_add_weighted's step, without the call)
                        span_total += arr
                    else:
                        span_total = _add_weighted(span_total, arr, w, step.weight0)
                    continue
            arr, st = self._score_array(step, state, pod, nodes, hit, span, offsets)
            if arr is None:
                return None, st
            total = _add_weighted(total, arr, w, step.weight0)
        if span_total is not None:
            if offsets is not None:
                span_total = span_total[offsets]
            if total is None:
                total = span_total
            else:
                total += span_total
        return total, None

    def _score_array(self, step: _ScoreStep, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                     hit: tuple[Any, np.ndarray] | None, span: slice | None = None,
                     offsets: np.ndarray | None = None) -> tuple[np.ndarray | None, Status | None]:
        """One plugin's normalized, range-checked (unweighted) scores of ``nodes`` on the batched path, or
        None and the error; ``span``, ``offsets``: the feasible rows as a stretch of rows and their places
        in it (None: all of it)."""
        p = step.plugin
        arr: np.ndarray | None = None
        try:
            if step.batch is not None and hit is not None:
                # a span only when every row of it is feasible (views); else the rows themselves (a plugin
                # here reads its values by row: gathering the feasible rows once costs less than the span's)
                if span is not None and step.spans and offsets is None:
                    arr = step.batch(state, pod, hit[0], span)
                if arr is None:
                    arr = step.batch(state, pod, hit[0], hit[1])
            if arr is None:
                values, st = p.score_nodes(state, pod, node_list(nodes))
                if st is not None and st.code != Code.Success:
                    return None, Status(Code.Error, error=f'running Score plugins: plugin "{step.name}" '
                                                          f'failed with: {st.message()}').with_plugin(step.name)
                arr = np.asarray(values, dtype=np.int64) if len(values) else np.zeros(0, dtype=np.int64)
                batched = False
            else:
                batched = True
        except Exception:
            return None, self._locate_score_fault(p, state, pod, nodes)
        if step.has_normalize:
            fn = step.batch_normalize
            if fn is not None:  # (``_normalize_array``'s first form, without its lookups)
                try:
                    normalized = fn(state, pod, arr)
                    # (an int64 array as it is: np.asarray's call and dtype conversion cost more than the test)
                    arr = normalized if type(normalized) is np.ndarray and normalized.dtype is _INT64 \
                        else np.asarray(normalized, dtype=np.int64)
                except Exception as exc:
                    return None, plugin_fault(step.name, "NormalizeScore", pod, exc)
            else:
                batched = False
                arr, st = self._normalize_array(p, state, pod, nodes, arr)
                if st is not None:
                    return None, st
        # in_range: the plugin's batched forms give scores in range by construction (no check needed)
        if len(arr) and not (batched and step.in_range) and _beyond_range(arr):
            return None, _out_of_range(step.name, arr.tolist())
        return arr, None

    def _normalize_array(self, p: ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                         arr: np.ndarray) -> tuple[np.ndarray, Status | None]:
        name = p.name
        fn = getattr(p, "batch_normalize", None)
        try:
            if fn is not None:
                return np.asarray(fn(state, pod, arr), dtype=np.int64), None
            fn = getattr(p, "normalize_values", None)
            if fn is not None:
                return np.asarray(fn(state, pod, arr.tolist()), dtype=np.int64), None
            scores = [NodeScore(n.name, v) for n, v in zip(nodes, arr.tolist(), strict=True)]
            st = p.normalize_score(state, pod, scores)
        except Exception as exc:
            return arr, plugin_fault(name, "NormalizeScore", pod, exc)
        if st is not None and st.code != Code.Success:
            return arr, Status(Code.Error, error=f'running Normalize on Score plugins: plugin '
                                                 f'"{name}" failed with: {st.message()}')
        return np.fromiter((ns.score for ns in scores), dtype=np.int64, count=len(scores)), None

    def _locate_score_fault(self, p: ScorePlugin, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        for n in nodes:
            try:
                p.score(state, pod, n)
            except Exception as exc:
                return plugin_fault(p.name, "Score", pod, exc, n.name)
        return Status(Code.Error, error=f"plugin {p.name} raised in Score for pod {pod.key}").with_plugin(p.name)

    # ------------------------------------------------------------------ Reserve .. PostBind
    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        for p in self.reserve:
            try:
                st = p.reserve(state, pod, node)
            except Exception as exc:
                return plugin_fault(p.name, "Reserve", pod, exc, node)
            if st is not None and st.code != Code.Success:
                return st.with_plugin(p.name)
        return None

    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in reversed(self.reserve):
            try:
                p.unreserve(state, pod, node)
            except Exception:
                pass

    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status | None:
        for p in self.pre_bind:
            if p.name in state.skip_prebind_plugins:
                continue
            try:
                st = p.pre_bind(state, pod, node)
            except Exception as exc:
                return plugin_fault(p.name, "PreBind", pod, exc, node)
            if st is not None and st.code != Code.Success:
                return st.with_plugin(p.name)
        return None

    def run_bind(self, state: CycleState, pod: Pod, node: str) -> tuple[str, Status | None]:
        """The plugin that bound the pod (the first that does not Skip)."""
        for p in self.bind:
            try:
                st = p.bind(state, pod, node)
            except Exception as exc:
                return p.name, plugin_fault(p.name, "Bind", pod, exc, node)
            if st is not None and st.code == Code.Skip:
                continue
            return p.name, (st.with_plugin(p.name) if st is not None and st.code != Code.Success else None)
        return "", Status(Code.Error, error="no bind plugin bound the pod")

    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for p in self.post_bind:
            try:
                p.post_bind(state, pod, node)
            except Exception:
                pass


def _add_weighted(total: np.ndarray | None, scores: np.ndarray, weight: int, weight0: Any = None) -> np.ndarray:
    """``total + weight * scores`` in place (a new array for the first plugin: the plugin's own array may
    be shared, e.g. a cached constant column). ``weight0``: the weight as a 0-d int64 array (the same
    products, cheaper), or None."""
    if weight0 is None:
        weight0 = weight
    if total is None:
        return scores * weight0 if weight != 1 else scores.copy()
    if weight == 1:
        total += scores
    else:
        total += scores * weight0
    return total
