"""The allocation scorer shared by NodeResourcesFit and NodeResourcesBalancedAllocation.

Upstream ``noderesources/resource_allocation.go`` plus the per-strategy scorers
(``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``,
``balanced_allocation.go``) and ``helper/shape_score.go``.

All arithmetic is integer arithmetic with Go semantics, except the balanced score and the final
RequestedToCapacityRatio average, which are float64 exactly as upstream orders them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pysched.framework.interface import MAX_NODE_SCORE
from pysched.framework.status import Status
from pysched.model.objects import Pod
from pysched.model.quantity import milli_to_value
from pysched.model.resources import CPU, EPHEMERAL, MEMORY, NON_ZERO_DEFAULTS, is_scalar
from pysched.plugins.helper import go_div, go_round
from pysched.snapshot.columns import FREE_SCALE, SMALL
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from pysched.snapshot.columns import NodeColumns

#: upstream ``config.MaxCustomPriorityScore``: shape scores are given on a 0..10 scale
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100
# the kept arrays' catch-up reads the columns' free numbers times FREE_SCALE as ``free * MaxNodeScore``
assert FREE_SCALE == MAX_NODE_SCORE

#: (requested, allocatable) vectors, one entry per configured resource -> node score
VectorScorer = Callable[[list[int], list[int]], int]


def pod_request_list(pod: Pod, resources: Sequence[str], use_requested: bool, pod_level: bool) -> list[int]:
    """The incoming pod's request for each configured resource (``calculatePodResourceRequestList``).

    Without ``use_requested`` a container that omits cpu or memory counts as 100m / 200Mi. cpu is in
    millicores, everything else in whole units (rounded up, as ``Quantity.Value()``). Overhead is always
    included; pod-level requests only when ``pod_level`` is true.
    """
    reqs = pod.compute_requests(non_missing=None if use_requested else NON_ZERO_DEFAULTS,
                                skip_pod_level=not pod_level)
    out = []
    for name in resources:
        milli = reqs.get(name, 0)
        out.append(milli if name == CPU else milli_to_value(milli))
    return out


def allocatable_and_requested(node: NodeInfo, resource: str, pod_request: int,
                              use_requested: bool) -> tuple[int, int]:
    """``calculateResourceAllocatableRequest``: (allocatable, requested incl. the pod) for one resource.

    (0, 0) means the resource takes no part in the score.
    """
    if pod_request == 0 and is_scalar(resource):
        return 0, 0
    base = node.requested if use_requested else node.non_zero_requested
    alloc = node.allocatable
    if resource == CPU:
        return alloc.milli_cpu, base.milli_cpu + pod_request
    if resource == MEMORY:
        return alloc.memory, base.memory + pod_request
    if resource == EPHEMERAL:
        # always the real request, whatever use_requested says
        return alloc.ephemeral_storage, node.requested.ephemeral_storage + pod_request
    if resource in alloc.scalar:
        return alloc.scalar[resource], node.requested.scalar.get(resource, 0) + pod_request
    return 0, 0


_KIND = {CPU: 0, MEMORY: 1, EPHEMERAL: 2}  # other resources: 3


def _constant(value: float | np.int64) -> np.ndarray:
    arr = np.array(value)
    arr.flags.writeable = False
    return arr


# the array steps' scalar operands as 0-d arrays (float64 / int64): the same values and results as Python
# numbers, without numpy converting a Python number at every call
_HALF, _ONE, _MAX_SCORE = (_constant(v) for v in (0.5, 1.0, float(MAX_NODE_SCORE)))
_ONE_INT = _constant(np.int64(1))
_EVERY_ROW = slice(None)


def _all_allocatable(cols: NodeColumns, kind: int) -> bool:
    """Every node row has a positive allocatable cpu (kind 0) / memory (1): the columns' short path
    applies. Allocatable never changes in one set of columns, so it is asked once."""
    key = ("resource_allocation", "allocatable>0", kind)
    hit = cols.masks.get(key)
    if hit is None:
        col = cols.alloc_cpu if kind == 0 else cols.alloc_mem
        hit = cols.masks[key] = np.array(not len(col) or bool(col.min() > 0))
    return bool(hit)


_KEPT_LIMIT = 128  # request arrays kept per scorer and resource in one set of columns
_REDO_ROWS = 48  # more rows changed since an array's last use: every row again by the array steps


class ResourceAllocationScorer:
    """Upstream ``resourceAllocationScorer``: gathers the per-resource vectors and applies a scorer."""

    __slots__ = ("_checked", "_cpu_memory", "_kept_form", "_least", "_pair", "_steps", "name", "pod_level", "resources", "scorer", "use_requested", "weights")

    def __init__(self, name: str, resources: Sequence[tuple[str, int]], scorer: VectorScorer,
                 use_requested: bool, pod_level: bool) -> None:
        self.name = name
        self.resources = [r for r, _ in resources]
        self.weights = [w for _, w in resources]
        self.scorer = scorer
        self._least = name == "LeastAllocated"  # (the kept arrays' rule: least_requested_score, else balanced)
        self.use_requested = use_requested
        self.pod_level = pod_level
        # cpu and memory only (neither is ever left out of the plan): score_rows' steps, worked out once
        self._steps: tuple[tuple[int, int, int], ...] | None = None  # (index, kind, weight)
        if self.resources and all(_KIND.get(r, 3) < 2 for r in self.resources):
            self._steps = tuple((i, _KIND[r], self.weights[i]) for i, r in enumerate(self.resources))
        self._checked: NodeColumns | None = None  # columns where every row has every resource (allocatable > 0)
        # cpu and memory, each once: (index of cpu's request, of memory's, cpu's weight, memory's weight), for
        # the short forms over both resources at once (``NodeColumns``' two-row arrays)
        self._pair: tuple[int, int, int, int] | None = None
        self._cpu_memory = self.resources == [CPU, MEMORY]  # the default resources, in that order
        if self._steps is not None and sorted(kind for _, kind, _ in self._steps) == [0, 1]:
            by_kind = {kind: (i, w) for i, kind, w in self._steps}
            self._pair = (by_kind[0][0], by_kind[1][0], by_kind[0][1], by_kind[1][1])
        # score_rows' kept-array form (``cols.small`` and requests below SMALL), worked out once: 1
        # LeastAllocated, 2 balanced, 0 none
        self._kept_form = 0 if self._pair is None else 1 if self._least else 2 if scorer is balanced_scorer else 0

    def pod_requests(self, pod: Pod) -> list[int]:
        steps = self._steps
        if steps is not None:
            # cpu and memory only: the sums the parser already derived (``derive_pod``). With requests as
            # given and pod-level requests counted they are PodRequests (``pod.requests``); with the
            # non-zero defaults and pod-level requests left out they are the non-zero requests, unless
            # the pod has pod-level requests (then derived with them).
            if self.use_requested and self.pod_level:
                r = pod.requests
                if self._cpu_memory:
                    return [r.milli_cpu, r.memory]
                return [r.milli_cpu if kind == 0 else r.memory for _, kind, _ in steps]
            if not self.use_requested and not self.pod_level and (
                    not pod.pod_requests or not pod.pod_level_requests_set()):  # (no pod-level requests at all)
                if self._cpu_memory:
                    return [pod.non0_cpu, pod.non0_mem]
                return [pod.non0_cpu if kind == 0 else pod.non0_mem for _, kind, _ in steps]
        return pod_request_list(pod, self.resources, self.use_requested, self.pod_level)

    def score(self, node: NodeInfo, pod_requests: Sequence[int]) -> tuple[int, Status | None]:
        if not self.resources:
            return 0, Status.as_error("resources not found")
        n = len(self.resources)
        requested = [0] * n
        allocatable = [0] * n
        for i, name in enumerate(self.resources):
            alloc, req = allocatable_and_requested(node, name, pod_requests[i], self.use_requested)
            if alloc == 0:
                continue
            allocatable[i] = alloc
            requested[i] = req
        return self.scorer(requested, allocatable), None


    def _plan(self, pod_requests: Sequence[int]) -> list[tuple[int, int, str, int]]:
        plan = []  # (index, kind, scalar name, pod request)
        for i, name in enumerate(self.resources):
            pr = pod_requests[i]
            if pr == 0 and is_scalar(name):
                continue
            plan.append((i, _KIND.get(name, 3), name, pr))
        return plan

    def score_rows(self, cols: NodeColumns, rows: np.ndarray | slice, pod_requests: Sequence[int]) -> np.ndarray | None:
        """``score`` of the nodes at ``rows`` of the columns as one int64 array, for the default
        configurations (cpu and memory; LeastAllocated or balanced); None otherwise. ``rows`` may be a
        slice (then the columns are read through views: nothing here writes into what it read)."""
        steps = self._steps
        if steps is not None and (self._checked is cols or self._usable(cols)):  # (_usable's own first test)
            form = self._kept_form
            if form and cols.small:
                pair = self._pair
                cpu, mem = pod_requests[pair[0]], pod_requests[pair[1]]  # type: ignore[index]
                if 0 <= cpu < SMALL and 0 <= mem < SMALL:
                    if form == 1:
                        return self._least_allocated_kept(cols, rows, cpu, mem)
                    return self._balanced_kept(cols, rows, cpu, mem)
            if self.name == "LeastAllocated":
                return self._least_allocated_rows(cols, rows, pod_requests, steps)
            if self.scorer is balanced_scorer and len(steps) == 2:
                return self._balanced_rows(cols, rows, pod_requests, steps)
        if isinstance(rows, slice):
            return None  # the general forms below take row numbers
        plan = self._plan(pod_requests)
        if not plan or not all(kind < 2 for _, kind, _, _ in plan):
            return None
        if self.name == "LeastAllocated":
            return self._least_allocated_columns(cols, rows, plan)
        if self.scorer is balanced_scorer and len(plan) == 2:
            return self._balanced_columns(cols, rows, plan)
        return None

    def score_nodes(self, nodes: Sequence[NodeInfo], pod_requests: Sequence[int],
                    rows: tuple[NodeColumns, np.ndarray] | None = None) -> list[int]:
        """``score`` over many nodes: the per-resource lookups are resolved once, not per node; with
        ``rows`` (the nodes' rows in the node columns) the default configurations are array operations."""
        n = len(self.resources)
        plan = self._plan(pod_requests)
        use_requested = self.use_requested
        scorer = self.scorer
        if plan and all(kind < 2 for _, kind, _, _ in plan):
            if self.name == "LeastAllocated":
                if rows is not None:
                    return self._least_allocated_columns(rows[0], rows[1], plan).tolist()
                return self._least_allocated_cpu_memory(nodes, plan)
            if scorer is balanced_scorer:
                if rows is not None and len(plan) == 2:
                    return self._balanced_columns(rows[0], rows[1], plan).tolist()
                return self._balanced_cpu_memory(nodes, plan)
        out = []
        for node in nodes:
            base = node.requested if use_requested else node.non_zero_requested
            alloc = node.allocatable
            requested = [0] * n
            allocatable = [0] * n
            for i, kind, name, pr in plan:
                if kind == 0:
                    a, r = alloc.milli_cpu, base.milli_cpu + pr
                elif kind == 1:
                    a, r = alloc.memory, base.memory + pr
                elif kind == 2:
                    a, r = alloc.ephemeral_storage, node.requested.ephemeral_storage + pr
                else:
                    a = alloc.scalar.get(name, 0)
                    r = node.requested.scalar.get(name, 0) + pr
                if a:
                    allocatable[i] = a
                    requested[i] = r
            out.append(scorer(requested, allocatable))
        return out

    # Fast paths for the default configurations: the same integer and float steps as the general
    # scorers, without building the per-node vectors.
    def _least_allocated_cpu_memory(self, nodes: Sequence[NodeInfo], plan: list) -> list[int]:
        steps = [(kind == 0, pr, self.weights[i]) for i, kind, _, pr in plan]
        out = []
        for node in nodes:
            base = node.non_zero_requested
            alloc = node.allocatable
            total = weight_sum = 0
            for is_cpu, pr, w in steps:
                if is_cpu:
                    a, r = alloc.milli_cpu, base.milli_cpu + pr
                else:
                    a, r = alloc.memory, base.memory + pr
                if a:
                    total += (0 if r > a else (a - r) * MAX_NODE_SCORE // a) * w
                    weight_sum += w
            out.append(go_div(total, weight_sum) if weight_sum else 0)
        return out

    # The same steps as arrays over the node columns (int64 for the integer steps, float64 where the
    # scalar code uses Python floats): identical results, one pass per resource instead of per node.
    def _least_allocated_columns(self, cols: NodeColumns, rows: np.ndarray, plan: list) -> np.ndarray:
        weight_sum = sum(self.weights[i] for i, _, _, _ in plan)
        if weight_sum <= 0:
            return self._least_allocated_general(cols, rows, plan)
        parts = []
        for i, kind, _, pr in plan:
            if not _all_allocatable(cols, kind):
                return self._least_allocated_general(cols, rows, plan)
            a = (cols.alloc_cpu if kind == 0 else cols.alloc_mem)[rows]
            free = a - (cols.nz_cpu if kind == 0 else cols.nz_mem)[rows]
            free -= pr
            np.maximum(free, 0, out=free)  # requested > allocatable scores 0
            free *= MAX_NODE_SCORE
            free //= a  # non-negative operands: floor division is Go's
            w = self.weights[i]
            if w != 1:
                free *= w
            parts.append(free)
        if not parts:
            return np.zeros(len(rows), dtype=np.int64)
        total = parts[0]
        for part in parts[1:]:
            total += part
        if weight_sum != 1:
            total //= weight_sum  # total >= 0, weight_sum > 0
        return total

    def _usable(self, cols: NodeColumns) -> bool:
        """Every row of ``cols`` has every resource of the steps, and the weights sum to more than 0: the
        short forms below apply (asked once per set of columns)."""
        if self._checked is cols:
            return True
        steps = self._steps
        if steps is None or sum(w for _, _, w in steps) <= 0 or not all(_all_allocatable(cols, k) for _, k, _ in steps):
            return False
        self._checked = cols
        return True

    def _least_allocated_rows(self, cols: NodeColumns, rows: np.ndarray | slice, pod_requests: Sequence[int],
                              steps: tuple[tuple[int, int, int], ...]) -> np.ndarray:
        """``_least_allocated_columns`` when ``_usable``: the same integer steps."""
        total: np.ndarray | None = None
        weight_sum = 0
        for i, kind, w in steps:
            if kind == 0:
                a = cols.alloc_cpu[rows]
                free = a - cols.nz_cpu[rows]
            else:
                a = cols.alloc_mem[rows]
                free = a - cols.nz_mem[rows]
            free -= pod_requests[i]
            np.maximum(free, 0, out=free)  # requested > allocatable scores 0
            free *= MAX_NODE_SCORE
            free //= a  # non-negative operands: floor division is Go's
            if w != 1:
                free *= w
            weight_sum += w
            if total is None:
                total = free
            else:
                total += free
        assert total is not None
        if weight_sum != 1:
            total //= weight_sum  # total >= 0, weight_sum > 0
        return total

    # Kept per resource and request (``cols.small`` only): a node's per-resource score or fraction changes
    # only when the node does, and pods ask for a few distinct cpu and memory amounts, so each (resource,
    # request) keeps its values of every row in ``cols.score_cache``; the rows read again since its last
    # use (``cols.row_log``) are worked out again node by node, with the per-node rule of ``score``.
    # A cycle then adds two kept arrays instead of a dozen steps over the rows.
    def _kept_pair(self, cols: NodeColumns, cpu: int, mem: int) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``cols``, for the pod's ``cpu`` and ``mem`` requests, the cpu array and the memory
        array: LeastAllocated's ``least_requested_score`` (int64), or half the balanced fraction
        ``min(float(requested + request) / float(allocatable), 1.0)`` (float64; halving is exact, and
        ``f0 / 2 - f1 / 2`` is ``(f0 - f1) / 2`` exactly: these fractions are 0 or above 2**-47, nothing
        gets near the subnormals). Callers only read them (and hand out new arrays computed from them,
        never views of them). Both resources in one call: the scorer's arrays are looked up once
        (``cols.score_cache[self]``: per resource, request -> [array, len(row_log) then, its memoryview])."""
        kept: tuple[dict[int, list[Any]], dict[int, list[Any]]] | None = cols.score_cache.get(self)
        if kept is None:
            kept = cols.score_cache[self] = ({}, {})
        log = cols.row_log
        end = len(log)
        c = kept[0].get(cpu)
        m = kept[1].get(mem)
        if c is not None and m is not None and c[1] == end and m[1] == end:
            return c[0], m[0]
        top = MAX_NODE_SCORE
        # One item store per row, through a memoryview of the array (the same int64 / float64 element;
        # about half the steps of a NumPy item assignment, fewer than a fancy assignment of a few). A row
        # logged twice is worked out twice (the same value from the same row): cheaper than building a
        # set of the rows every time. The row's numbers are the columns' Python lists (``NodeColumns``:
        # the values its int64 rows hold). LeastAllocated's ``least_requested_score`` from the row's
        # allocatable - non-zero requested ``free``, read times ``top`` (``nz_free100_*``): requested >
        # allocatable is ``free - request < 0``, and ``(a - r) * top // a`` is ``(free * top - request *
        # top) // a`` (capacity > 0: _usable). The balanced fraction is ``(requested + request) /
        # allocatable`` of ints below 2**53 (``cols.small``, requests below SMALL): Python divides them as
        # the two exact float64 values, so the sum and quotient of the columns' floats (``req_*_f``,
        # ``alloc_*_f``; the sum is exact, below 2**53) are the same numbers, at a float's cost.
        if c is None or end - c[1] > _REDO_ROWS:
            c_arr = self._kept_all(cols, 0, cpu, kept[0], end)
        else:
            c_arr, pos, view = c
            if pos != end:
                c[1] = end
                if self._least:
                    alloc = cols.alloc_cpu_py
                    free = cols.nz_free100_cpu_py
                    q = cpu * top
                    for i in log[pos:end]:
                        f = free[i] - q
                        view[i] = f // alloc[i] if f >= 0 else 0
                else:  # balanced_scorer's fraction, halved
                    alloc_f = cols.alloc_cpu_f
                    req = cols.req_cpu_f
                    q_f = float(cpu)
                    for i in log[pos:end]:
                        frac = (req[i] + q_f) / alloc_f[i]
                        view[i] = 0.5 if frac > 1 else frac * 0.5
        if m is None or end - m[1] > _REDO_ROWS:
            m_arr = self._kept_all(cols, 1, mem, kept[1], end)
        else:
            m_arr, pos, view = m
            if pos != end:
                m[1] = end
                if self._least:
                    alloc = cols.alloc_mem_py
                    free = cols.nz_free100_mem_py
                    q = mem * top
                    for i in log[pos:end]:
                        f = free[i] - q
                        view[i] = f // alloc[i] if f >= 0 else 0
                else:
                    alloc_f = cols.alloc_mem_f
                    req = cols.req_mem_f
                    q_f = float(mem)
                    for i in log[pos:end]:
                        frac = (req[i] + q_f) / alloc_f[i]
                        view[i] = 0.5 if frac > 1 else frac * 0.5
        return c_arr, m_arr

    def _kept_all(self, cols: NodeColumns, kind: int, request: int, kept: dict[int, list[Any]], end: int
                  ) -> np.ndarray:
        """``_kept_pair``'s array of resource ``kind`` (0 cpu, 1 memory) worked out for every row by the
        array steps (``_least_allocated_rows`` / ``_fraction`` of one resource), kept in ``kept`` with the
        length of the row log ``end``."""
        if len(kept) >= _KEPT_LIMIT:
            kept.clear()
        if self._least:
            a = cols.alloc_cpu if kind == 0 else cols.alloc_mem
            arr = a - (cols.nz_cpu if kind == 0 else cols.nz_mem)
            arr -= request
            np.maximum(arr, 0, out=arr)  # requested > allocatable scores 0
            arr *= MAX_NODE_SCORE  # (< 2**53: cols.small)
            arr //= a  # non-negative operands: floor division is Go's
        else:
            arr = self._fraction(cols, _EVERY_ROW, kind, request)
            np.multiply(arr, _HALF, out=arr)
        # (new, contiguous arrays: int64 / float64 elements, memoryview formats "l" / "d" on 64-bit Linux
        # and macOS, "q" / "d" elsewhere: the stores above keep the element type either way)
        kept[request] = [arr, end, memoryview(arr)]
        return arr

    def _least_allocated_kept(self, cols: NodeColumns, rows: np.ndarray | slice, cpu: int, mem: int) -> np.ndarray:
        """``_least_allocated_rows`` from the kept per-resource scores: the weighted mean of the two."""
        _, _, w_cpu, w_mem = self._pair  # type: ignore[misc]
        c, m = self._kept_pair(cols, cpu, mem)
        if rows is not cols.all_rows:  # (every row: the kept arrays as they are, only read below)
            c = c[rows]
            m = m[rows]
        if w_cpu == 1 and w_mem == 1:
            if isinstance(rows, slice):
                total = c + m  # (views of the kept arrays: a new one)
            else:
                total = c  # (a gather is a new array already)
                total += m
            np.right_shift(total, _ONE_INT, out=total)  # // 2 of numbers not negative
            return total
        total = c * w_cpu
        total += m * w_mem
        weight_sum = w_cpu + w_mem  # > 0 (_usable)
        if weight_sum != 1:
            total //= weight_sum  # total >= 0, weight_sum > 0
        return total

    def _balanced_kept(self, cols: NodeColumns, rows: np.ndarray | slice, cpu: int, mem: int) -> np.ndarray:
        """``_balanced_rows`` from the kept halved capped fractions: the same floats."""
        c, m = self._kept_pair(cols, cpu, mem)
        d = c - m if rows is cols.all_rows else c[rows] - m[rows]  # (f0 - f1) / 2, a new array
        np.abs(d, out=d)
        np.subtract(_ONE, d, out=d)
        np.multiply(d, _MAX_SCORE, out=d)
        return d.astype(np.int64)

    def _balanced_rows(self, cols: NodeColumns, rows: np.ndarray | slice, pod_requests: Sequence[int],
                       steps: tuple[tuple[int, int, int], ...]) -> np.ndarray:
        """``_balanced_columns`` when ``_usable``: the same float steps."""
        (i0, k0, _), (i1, k1, _) = steps
        f0 = self._fraction(cols, rows, k0, pod_requests[i0])
        f0 -= self._fraction(cols, rows, k1, pod_requests[i1])
        f0 /= 2
        np.abs(f0, out=f0)
        np.subtract(1, f0, out=f0)
        f0 *= float(MAX_NODE_SCORE)
        return f0.astype(np.int64)

    @staticmethod
    def _fraction(cols: NodeColumns, rows: np.ndarray | slice, kind: int, pr: int) -> np.ndarray:
        if kind == 0:
            a, r = cols.alloc_cpu[rows], cols.req_cpu[rows]
        else:
            a, r = cols.alloc_mem[rows], cols.req_mem[rows]
        f = np.true_divide(r + pr, a)  # each operand as float64, as float(r) / float(a); r may be a view
        np.minimum(f, 1.0, out=f)
        return f

    def _least_allocated_general(self, cols: NodeColumns, rows: np.ndarray, plan: list) -> np.ndarray:
        """The same with nodes whose allocatable is 0 (such a resource takes no part in their score)."""
        total = np.zeros(len(rows), dtype=np.int64)
        weight_sum = np.zeros(len(rows), dtype=np.int64)
        for i, kind, _, pr in plan:
            w = self.weights[i]
            a = (cols.alloc_cpu if kind == 0 else cols.alloc_mem)[rows]
            r = (cols.nz_cpu if kind == 0 else cols.nz_mem)[rows] + pr
            has = a != 0
            safe = np.where(has, a, 1)
            part = np.where(r > a, 0, (a - r) * MAX_NODE_SCORE // safe)
            total += np.where(has, part * w, 0)
            weight_sum += np.where(has, w, 0)
        ws = np.where(weight_sum > 0, weight_sum, 1)
        quotient = np.where(total < 0, -((-total) // ws), total // ws)  # Go's division truncates
        return np.where(weight_sum > 0, quotient, 0)

    def _balanced_columns(self, cols: NodeColumns, rows: np.ndarray, plan: list) -> np.ndarray:
        fractions = []
        for _, kind, _, pr in plan:
            if not _all_allocatable(cols, kind):
                return self._balanced_general(cols, rows, plan)
            a = (cols.alloc_cpu if kind == 0 else cols.alloc_mem)[rows]
            r = (cols.req_cpu if kind == 0 else cols.req_mem)[rows]
            r += pr
            f = np.true_divide(r, a)  # each operand as float64, as float(r) / float(a)
            np.minimum(f, 1.0, out=f)
            fractions.append(f)
        f0, f1 = fractions
        f0 -= f1
        f0 /= 2
        np.abs(f0, out=f0)
        np.subtract(1, f0, out=f0)
        f0 *= float(MAX_NODE_SCORE)
        return f0.astype(np.int64)

    def _balanced_general(self, cols: NodeColumns, rows: np.ndarray, plan: list) -> np.ndarray:
        """The same with nodes whose allocatable is 0 (such a resource takes no part in their score)."""
        fractions = []
        for _, kind, _, pr in plan:
            a = (cols.alloc_cpu if kind == 0 else cols.alloc_mem)[rows]
            r = (cols.req_cpu if kind == 0 else cols.req_mem)[rows] + pr
            has = a != 0
            f = r.astype(np.float64) / np.where(has, a, 1).astype(np.float64)
            fractions.append((np.where(f > 1, 1.0, f), has))
        (f0, h0), (f1, h1) = fractions
        std = np.where(h0 & h1, np.abs((f0 - f1) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)

    def _balanced_cpu_memory(self, nodes: Sequence[NodeInfo], plan: list) -> list[int]:
        steps = [(kind == 0, pr) for _, kind, _, pr in plan]
        out = []
        for node in nodes:
            base = node.requested
            alloc = node.allocatable
            fractions = []
            for is_cpu, pr in steps:
                if is_cpu:
                    a, r = alloc.milli_cpu, base.milli_cpu + pr
                else:
                    a, r = alloc.memory, base.memory + pr
                if a:
                    f = float(r) / float(a)
                    fractions.append(1.0 if f > 1 else f)
            std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
            out.append(int((1 - std) * float(MAX_NODE_SCORE)))
        return out


def is_best_effort(pod_requests: Sequence[int]) -> bool:
    return not any(pod_requests)  # (integers: every one is 0)


# --------------------------------------------------------------------------- strategies

def least_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return (capacity - requested) * MAX_NODE_SCORE // capacity


def most_requested_score(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return requested * MAX_NODE_SCORE // capacity


def _weighted_integer_mean(per_resource: Callable[[int, int], int], weights: Sequence[int]) -> VectorScorer:
    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = 0
        weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            node_score += per_resource(requested[i], alloc) * weights[i]
            weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_div(node_score, weight_sum)
    return scorer


def least_allocated_scorer(weights: Sequence[int]) -> VectorScorer:
    return _weighted_integer_mean(least_requested_score, weights)


def most_allocated_scorer(weights: Sequence[int]) -> VectorScorer:
    return _weighted_integer_mean(most_requested_score, weights)


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """``helper.BuildBrokenLinearFunction`` over (utilization, score) points, Go integer division."""
    points = list(shape)

    def f(p: int) -> int:
        for i, (u, s) in enumerate(points):
            if p <= u:
                if i == 0:
                    return s
                pu, ps = points[i - 1]
                return ps + go_div((s - ps) * (p - pu), u - pu)
        return points[-1][1] if points else 0
    return f


def requested_to_capacity_ratio_scorer(weights: Sequence[int],
                                       shape: Sequence[tuple[int, int]]) -> VectorScorer:
    """Shape scores are given on 0..10 and scaled to 0..100 before the function is built."""
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    raw = broken_linear([(int(u), int(s) * scale) for u, s in shape])

    def resource_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(go_div(requested * MAX_UTILIZATION, capacity))

    def scorer(requested: list[int], allocatable: list[int]) -> int:
        node_score = 0
        weight_sum = 0
        for i, alloc in enumerate(allocatable):
            if alloc == 0:
                continue
            s = resource_score(requested[i], alloc)
            if s > 0:  # only resources with a positive score count, in both sums
                node_score += s * weights[i]
                weight_sum += weights[i]
        if weight_sum == 0:
            return 0
        return go_round(float(node_score) / float(weight_sum))
    return scorer


def balanced_scorer(requested: list[int], allocatable: list[int]) -> int:
    """``balancedResourceScorer``: 100 * (1 - std dev of the capped usage fractions), truncated."""
    fractions: list[float] = []
    total = 0.0
    for i, alloc in enumerate(allocatable):
        if alloc == 0:
            continue
        fraction = float(requested[i]) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / float(len(fractions))
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = math.sqrt(acc / float(len(fractions)))
    return int((1 - std) * float(MAX_NODE_SCORE))
