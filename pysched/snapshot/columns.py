"""Node columns: the numbers the common Filter and Score plugins read, one numpy array per quantity with
one row per node of a ``ClusterState`` (in ``node_infos`` order), for the batched (fast) path.

Rows follow the cluster: the nodes named in ``ClusterState.change_log`` since the last refresh are read
again from their ``NodeInfo`` (binding and preemption are the only changes the real node infos see;
preemption's dry runs work on clones). Per-pod-shape masks of plugins whose verdict depends only on the
pod's shape and the node object (taints, labels, cordon) are cached here too, keyed by the plugin and a
signature of what it reads from the pod; a new ``ClusterState`` (an edited cluster) gets new columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    from pysched.snapshot.cluster import ClusterState
    from pysched.snapshot.nodeinfo import NodeInfo

ROWS_KEY = "pysched/feasible-rows"  # CycleState: (the feasible list, its rows, the columns)
#: bound of the cpu/memory quantities (allocatable, requested) for ``NodeColumns.small`` (64 Ti: bytes of
#: memory, millicores of cpu): times 100 they stay far below 2**63 (int64 steps cannot overflow) and sums
#: of two are exact float64 integers (< 2**53), as the scorers' kept per-resource arrays assume
SMALL = 1 << 46
#: the factor of ``NodeColumns.nz_free100_*_py`` (MaxNodeScore: the scorers' kept arrays check it is theirs)
FREE_SCALE = 100


class NodeColumns:
    def __init__(self, state: ClusterState) -> None:
        infos = state.node_infos
        self.infos = infos
        self.n = len(infos)
        self.index = {ni.name: i for i, ni in enumerate(infos)}
        # every row as a span: the host choice hands this very object to the plugins that score spans when
        # it scores every row, so that they can tell (an identity test) and use whole arrays, no view of each
        self.all_rows = slice(0, self.n)
        # object arrays, so that a row selection is one C-level step (``infos_arr[rows].tolist()``)
        self.names_arr = np.empty(self.n, dtype=object)
        self.infos_arr = np.empty(self.n, dtype=object)
        for i, ni in enumerate(infos):
            self.names_arr[i] = ni.name
            self.infos_arr[i] = ni
        self._scalar: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # name -> (allocatable, requested)
        # Every int64 quantity is a row of one array, so that a node's changed numbers are stored in one
        # step (``_read``): rows 0-1 allocatable cpu/memory, 2-3 non-zero requested cpu/memory, 4-5
        # allocatable - requested cpu/memory, 6-8 requested cpu/memory/ephemeral, 9 allocatable - requested
        # ephemeral (rows 2-9 change on bind), 10-11 allocatable ephemeral/pods. cpu and memory side by
        # side, so that the resource steps treat both in one array step; the 1-D names are views of the
        # rows. The pods on a node are kept as ``pod_room`` only (the one question asked of them).
        ints = self._ints = np.zeros((12, self.n), dtype=np.int64)
        self.alloc_cpu, self.alloc_mem = ints[0], ints[1]
        self.nz_cpu, self.nz_mem = ints[2], ints[3]
        # allocatable - requested, kept with the rows (NodeResourcesFit's batched Filter reads them)
        self.free_cpu, self.free_mem = ints[4], ints[5]
        self.req_cpu, self.req_mem, self.req_eph = ints[6], ints[7], ints[8]
        self.free_eph = ints[9]
        self.alloc_eph, self.alloc_pods = ints[10], ints[11]
        self.small = True  # every cpu/memory quantity read so far is below SMALL (see the scorers' short forms)
        self.pod_room = np.zeros(self.n, dtype=bool)  # whether a node has room for one more pod
        self.full_rows: set[int] = set()  # the rows without (``pod_room`` false)
        # (``_read`` stores through it item by item, as through ``_row_views``)
        self._pod_room_view = memoryview(self.pod_room)  # type: ignore[arg-type]
        # The same cpu / memory numbers per row as Python numbers, for the scorers' row-by-row catch-up of
        # their kept arrays (``resource_allocation``): a list item costs less to read than the node's
        # attribute chain, and what every kept array of a row works out the same way is worked out once
        # per row read, not once per kept array: allocatable - non-zero requested times MaxNodeScore
        # (LeastAllocated's ``(a - r) * 100 // a`` is ``(100 * free - 100 * request) // a``: one
        # multiplication of large ints fewer per array), and requested and allocatable as floats (the
        # balanced fraction ``(r + request) / a`` of ints below 2**53, ``cols.small``, is the quotient
        # of those exact floats: a float sum and division cost less than the ints'). Allocatable never
        # changes; the others are kept with the rows (``_read``).
        self.alloc_cpu_py = [ni.allocatable.milli_cpu for ni in infos]
        self.alloc_mem_py = [ni.allocatable.memory for ni in infos]
        self.alloc_cpu_f: list[float] = []  # allocatable as floats (while ``small``: set below)
        self.alloc_mem_f: list[float] = []
        self.nz_free100_cpu_py = [0] * self.n  # (allocatable - non-zero requested) * FREE_SCALE
        self.nz_free100_mem_py = [0] * self.n
        self.req_cpu_f = [0.0] * self.n  # requested, as floats
        self.req_mem_f = [0.0] * self.n
        # one memoryview per int64 row (``_read`` stores a changed node's numbers item by item: about half
        # the cost of assigning a tuple to the column, which NumPy converts to an array first)
        self._row_views = [memoryview(row) for row in ints]  # type: ignore[arg-type]
        v = self._row_views
        for i, ni in enumerate(infos):
            a = ni.allocatable
            try:
                v[0][i] = a.milli_cpu
                v[1][i] = a.memory
                v[10][i] = a.ephemeral_storage
                v[11][i] = a.allowed_pod_number
            except (ValueError, TypeError):  # a number beyond int64: NumPy's stores raise as they always did
                self.alloc_cpu[i], self.alloc_mem[i], self.alloc_eph[i] = a.milli_cpu, a.memory, a.ephemeral_storage
                self.alloc_pods[i] = a.allowed_pod_number
            self._read(i, ni)
        if self.small:  # (below SMALL: exact floats)
            self.alloc_cpu_f = [float(a) for a in self.alloc_cpu_py]
            self.alloc_mem_f = [float(a) for a in self.alloc_mem_py]
        self.log_pos = len(state.change_log)
        # the rows read again since the columns were built, in order (once per refresh a row changed in):
        # arrays over every row kept elsewhere (``score_cache``) catch up from it
        self.row_log: list[int] = []
        # a scorer's per-row arrays, and where in row_log each was last brought up to date
        self.score_cache: dict[Any, Any] = {}
        self.masks: dict[tuple[Any, ...], np.ndarray] = {}
        self.seen: set[tuple[Any, ...]] = set()  # pod shapes met once (their masks are built the second time)
        # (per row how many node names sort after its own, the number of rows as a 0-d array): the host
        # choice's tie-break, built on first use (``scheduler.cycle``)
        self.name_ranks: tuple[np.ndarray, np.ndarray] | None = None
        self.names_sorted: bool | None = None  # whether the names ascend with the rows (``scheduler.cycle``)

    def _read(self, i: int, ni: NodeInfo) -> None:
        r = ni.requested
        a = ni.allocatable
        nz = ni.non_zero_requested
        # (only ``pod_room`` reads it: allocatable is never negative and its pods number is an int64, stored
        # when the columns were built, so this difference is one too and no int64 row needs it)
        free_pods = a.allowed_pod_number - len(ni.pods)
        r_cpu, r_mem, nz_cpu, nz_mem = r.milli_cpu, r.memory, nz.milli_cpu, nz.memory
        v = self._row_views
        try:
            v[2][i] = nz_cpu
            v[3][i] = nz_mem
            v[4][i] = a.milli_cpu - r_cpu
            v[5][i] = a.memory - r_mem
            v[6][i] = r_cpu
            v[7][i] = r_mem
            v[8][i] = r.ephemeral_storage
            v[9][i] = a.ephemeral_storage - r.ephemeral_storage
        except (ValueError, TypeError):  # a number beyond int64: NumPy's store raises as it always did
            self._ints[2:10, i] = (nz_cpu, nz_mem, a.milli_cpu - r_cpu, a.memory - r_mem, r_cpu, r_mem,
                                   r.ephemeral_storage, a.ephemeral_storage - r.ephemeral_storage)
        if free_pods >= 1:
            self._pod_room_view[i] = True
            if self.full_rows:
                self.full_rows.discard(i)
        else:
            self._pod_room_view[i] = False
            self.full_rows.add(i)
        if self.small:
            a_cpu, a_mem = a.milli_cpu, a.memory
            # (chained comparisons: fewer steps than the max and min of a tuple of the six)
            if 0 <= r_cpu < SMALL and 0 <= r_mem < SMALL and 0 <= nz_cpu < SMALL and 0 <= nz_mem < SMALL \
                    and 0 <= a_cpu < SMALL and 0 <= a_mem < SMALL:  # (the lists only the short forms read)
                self.nz_free100_cpu_py[i] = (a_cpu - nz_cpu) * FREE_SCALE
                self.nz_free100_mem_py[i] = (a_mem - nz_mem) * FREE_SCALE
                self.req_cpu_f[i] = float(r_cpu)
                self.req_mem_f[i] = float(r_mem)
            else:
                self.small = False  # (never true again for these columns: the short forms are not used)
        if self._scalar:
            for name, (_, req) in self._scalar.items():
                req[i] = r.scalar.get(name, 0)

    def scalar(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(allocatable, requested) of a scalar resource (extended, hugepages, ...), built on first use."""
        hit = self._scalar.get(name)
        if hit is None:
            infos = self.infos
            alloc = np.fromiter((ni.allocatable.scalar.get(name, 0) for ni in infos), dtype=np.int64, count=self.n)
            req = np.fromiter((ni.requested.scalar.get(name, 0) for ni in infos), dtype=np.int64, count=self.n)
            hit = self._scalar[name] = (alloc, req)
        return hit

    def refresh(self, state: ClusterState) -> None:
        log = state.change_log
        if self.log_pos < len(log):
            index = self.index
            row_log = self.row_log
            # (most refreshes follow one bind: one name, no set of them)
            for name in log[-1:] if len(log) - self.log_pos == 1 else set(log[self.log_pos:]):
                i = index.get(name)
                if i is not None:
                    self._read(i, self.infos[i])
                    row_log.append(i)
            self.log_pos = len(log)

    def rows_of(self, nodes: list[NodeInfo]) -> np.ndarray:
        index = self.index
        return np.fromiter((index[ni.name] for ni in nodes), dtype=np.int64, count=len(nodes))


def columns_for(state: ClusterState) -> NodeColumns:
    """The state's columns, built on first use and brought up to date."""
    cols: NodeColumns | None = getattr(state, "_pysched_columns", None)
    if cols is None or cols.infos is not state.node_infos or cols.n != len(state.node_infos):
        cols = NodeColumns(state)
        state._pysched_columns = cols  # type: ignore[attr-defined]
    elif cols.log_pos < len(state.change_log):  # (refresh's own test: most calls find nothing new)
        cols.refresh(state)
    return cols


def feasible_rows(state: Any, nodes: Sequence[NodeInfo]) -> tuple[NodeColumns, np.ndarray] | None:
    """The columns and rows of ``nodes`` when they are the feasible nodes the fast filter found (its
    ``RowNodes`` or the list built from them)."""
    hit = state.read(ROWS_KEY) if state is not None else None
    if hit is None:
        return None
    found = hit[0]
    if found is nodes:  # (its rows by construction)
        return hit[2], hit[1]
    if found.built is not nodes or len(hit[1]) != len(nodes):
        return None
    return hit[2], hit[1]


class RowNodes(Sequence["NodeInfo"]):
    """The feasible nodes the fast filter found, as rows of the node columns, in window order (ascending
    from the window's start row, then, when the window wrapped past the last row, ascending from row 0:
    the host choice relies on it): the list of their
    ``NodeInfo`` objects is built only when something reads the nodes one by one (``as_list``, or any
    item). The host choice of the batched path reads rows only, and gathering a few hundred objects out
    of the object column and listing them costs more than the rest of a cycle's Filter window. Read only;
    callers that need a list (plugins, extenders) get ``as_list()``."""

    __slots__ = ("built", "cols", "low", "rows", "start")

    def __init__(self, cols: NodeColumns, rows: np.ndarray, built: list[NodeInfo] | None = None,
                 start: int = -1, low: int = -1) -> None:
        self.cols = cols
        self.rows = rows
        self.built = built  # the list, once built (``as_list``)
        self.start = start  # >= 0: the rows are consecutive from this row, wrapping past the last one
        # >= 0: the place in ``rows`` of the smallest row (0 when they ascend; else where the window went
        # on at row 0), as the fast filter's window found it; -1 when not known (``first_best_in_row_order``)
        self.low = low

    def as_list(self) -> list[NodeInfo]:
        """The nodes as a list (built once; the same list every time)."""
        built = self.built
        if built is None:
            start = self.start
            if start >= 0:  # consecutive rows: list slices
                infos = self.cols.infos
                stop = start + len(self.rows)
                n = len(infos)
                built = infos[start:stop] if stop <= n else infos[start:] + infos[:stop - n]
            else:
                built = self.cols.infos_arr[self.rows].tolist()
            self.built = built
        return built

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...

    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...

    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        return self.as_list()[i]

    def __iter__(self) -> Iterator[NodeInfo]:
        return iter(self.as_list())


def node_list(nodes: Sequence[NodeInfo]) -> list[NodeInfo]:
    """``nodes`` as a list: a ``RowNodes``' built list, any other sequence as it is when it is a list."""
    if isinstance(nodes, RowNodes):
        return nodes.as_list()
    return nodes if isinstance(nodes, list) else list(nodes)
