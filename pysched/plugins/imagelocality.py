"""ImageLocality: favour nodes that already hold the pod's images, weighted by how widely they are spread."""

from __future__ import annotations

import numpy as np

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import MAX_NODE_SCORE, Handle, ScorePlugin
from pysched.framework.status import Status
from pysched.model.objects import Pod
from pysched.plugins.helper import go_div
from pysched.snapshot.columns import NodeColumns, feasible_rows
from pysched.snapshot.nodeinfo import ImageState, NodeInfo

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the name has no tag (no ``:`` after the last ``/``); nothing else."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def scaled_image_score(state: ImageState, total_nodes: int) -> int:
    spread = float(state.num_nodes) / float(total_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(node: NodeInfo, pod: Pod, total_nodes: int) -> int:
    images = node.image_states
    total = 0
    for c in pod.init_containers + pod.containers:
        state = images.get(normalized_image_name(c.image))
        if state is not None:
            total += scaled_image_score(state, total_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality(ScorePlugin):
    NAME = NAME

    BATCH_SCORES_IN_RANGE = True  # the columns are clamped to [0, MaxNodeScore]
    BATCH_SCORE_SPANS = True  # batch_score takes a slice of rows (a view of the cached column)

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self._last: tuple[Pod, NodeColumns, int, tuple[np.ndarray, int | None] | None] | None = None
        # (the columns, whether none of their nodes lists an image): asked on every host choice
        self._imageless: tuple[NodeColumns, bool] | None = None

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        # every node of the snapshot, not only the feasible ones
        total = self.handle.snapshot.num_nodes() if self.handle is not None else 1
        if total == 0:
            return 0, None
        s = sum_image_scores(node, pod, total)
        return calculate_priority(s, len(pod.init_containers) + len(pod.containers)), None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        total = self.handle.snapshot.num_nodes() if self.handle is not None else 1
        if total == 0:
            return [0] * len(nodes), None
        names = [normalized_image_name(c.image) for c in pod.init_containers + pod.containers]
        count = len(names)
        rows = feasible_rows(state, nodes)
        if rows is not None:  # the fast path: node images never change, so each node once per image list
            cols, idx = rows
            key = (NAME, tuple(names), total)
            scores = cols.masks.get(key)
            if scores is None:
                scores = cols.masks[key] = np.full(cols.n, -1, dtype=np.int64)  # -1: not computed yet
            todo = idx[scores[idx] < 0]
            if len(todo):
                infos = cols.infos
                scores[todo] = self._scores([infos[i] for i in todo.tolist()], names, count, total)
            return scores[idx].tolist(), None
        return self._scores(nodes, names, count, total), None

    def batch_score(self, state: CycleState, pod: Pod, cols: NodeColumns, rows: np.ndarray) -> np.ndarray | None:
        """Node images never change during a simulation: the score of every node for a list of image
        names is one column (per image name its scaled score, summed over the pod's containers and
        clamped as arrays), built the first time a pod with that list is scored, then looked up."""
        entry = self._entry(pod, cols)
        return entry[0][rows].astype(np.int64) if entry is not None else None  # (kept as int8: 0..100)

    def batch_constant(self, state: CycleState, pod: Pod, cols: NodeColumns) -> int | None:
        """The score every node gets when the pod's column holds one value (e.g. no node has its images)."""
        hit = self._imageless
        if hit is None or hit[0] is not cols:
            hit = self._imageless = (cols, _no_images(cols))
        if hit[1]:
            return 0  # every sum is 0, below the threshold: priority 0 (whatever the pod's containers)
        entry = self._entry(pod, cols)
        return entry[1] if entry is not None else None

    def _entry(self, pod: Pod, cols: NodeColumns) -> tuple[np.ndarray, int | None] | None:
        """The pod's column and the one value it holds (None when it holds several); None without images
        or nodes. The last answer is kept: the host choice asks batch_constant, then batch_score."""
        total = self.handle.snapshot.num_nodes() if self.handle is not None else 1
        last = self._last
        if last is not None and last[0] is pod and last[1] is cols and last[2] == total:
            return last[3]
        # looked up by the images as written (normalizing them is the costlier step); the column itself
        # is built once per normalized list
        raw = tuple([c.image for c in pod.init_containers] + [c.image for c in pod.containers]) \
            if pod.init_containers else tuple([c.image for c in pod.containers])
        entry: tuple[np.ndarray, int | None] | None = None
        if total != 0 and raw:
            as_written = (NAME, "as written", raw, total)
            entry = cols.masks.get(as_written)  # type: ignore[assignment]
            if entry is None:
                col = self._priority_column(cols, tuple(map(normalized_image_name, raw)), total)
                lo = int(col.min()) if len(col) else 0
                entry = cols.masks[as_written] = (col, lo if len(col) and lo == int(col.max()) else None)  # type: ignore[assignment]
        self._last = (pod, cols, total, entry)
        return entry

    @staticmethod
    def _priority_column(cols: NodeColumns, names: tuple[str, ...], total: int) -> np.ndarray:
        key = (NAME, "priority", names, total)
        col = cols.masks.get(key)
        if col is None:
            s = _image_column(cols, names[0], total).copy()
            for name in names[1:]:  # a name listed twice counts twice, as in the per-node sum
                s += _image_column(cols, name, total)
            max_threshold = MAX_CONTAINER_THRESHOLD * len(names)
            np.maximum(s, MIN_THRESHOLD, out=s)  # (np.clip's wrapper costs more than the two steps)
            np.minimum(s, max_threshold, out=s)
            s -= MIN_THRESHOLD
            s *= MAX_NODE_SCORE
            s //= max_threshold - MIN_THRESHOLD  # non-negative operands: floor division is Go's truncating one
            # kept as int8 (scores are 0..100): one column per image list stays small (5 KB per 5,000 nodes)
            col = cols.masks[key] = s.astype(np.int8)
        return col

    @staticmethod
    def _scores(nodes: list[NodeInfo], names: list[str], count: int, total: int) -> list[int]:
        out = []
        for node in nodes:
            images = node.image_states
            s = 0
            if images:
                for name in names:
                    st = images.get(name)
                    if st is not None:
                        s += scaled_image_score(st, total)
            out.append(calculate_priority(s, count))
        return out


_NO_IMAGES = (NAME, "no node has images")


def _no_images(cols: NodeColumns) -> bool:
    """No node of ``cols`` lists an image (node images never change within one columns object)."""
    hit = cols.masks.get(_NO_IMAGES)
    if hit is None:
        hit = cols.masks[_NO_IMAGES] = np.array([not any(ni.image_states for ni in cols.infos)])
    return bool(hit[0])


_IMAGE_MAPS = (NAME, "image maps")


def _image_column(cols: NodeColumns, name: str, total: int) -> np.ndarray:
    """Per node row, the scaled score of image ``name`` (0 where the node does not list it)."""
    key = (NAME, "image", name, total)
    col = cols.masks.get(key)
    if col is None:
        maps = cols.masks.get(_IMAGE_MAPS)
        if maps is None:  # each node's image map ({} for none), in row order (node images never change)
            maps = cols.masks[_IMAGE_MAPS] = np.empty(cols.n, dtype=object)
            maps[:] = [ni.image_states or {} for ni in cols.infos]
        rows = [i for i, images in enumerate(maps.tolist()) if name in images]
        col = np.zeros(cols.n, dtype=np.int64)
        if rows:
            scores: dict[int, int] = {}  # id(ImageState) -> its scaled score (nodes share one state per image)
            vals = []
            for i in rows:
                st = maps[i][name]
                v = scores.get(id(st))
                if v is None:
                    v = scores[id(st)] = scaled_image_score(st, total)
                vals.append(v)
            col[np.array(rows, dtype=np.int64)] = vals
        cols.masks[key] = col
    return col


PLUGIN = ImageLocality


def factory(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality(handle)
