"""Shared helpers of the in-tree plugins (upstream ``plugins/helper``) and Go's integer division and
``math.Round`` (PodTopologySpread's ``go_log`` stays beside its one user)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pysched.framework import plugin_args
from pysched.framework.interface import MAX_NODE_SCORE, NodeScore
from pysched.model.objects import Pod, Taint, Toleration


def decode_plugin_args(name: str, raw: Any) -> Any:
    """Typed, defaulted and validated args of an in-tree plugin (``None``: the v1 defaults)."""
    return plugin_args.DECODERS[name](raw, "args")


def go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


def go_round(x: float) -> int:
    """Go's ``math.Round``: half away from zero, exactly (``floor(x + 0.5)`` is off for
    0.49999999999999994, whose sum rounds up to 1.0)."""
    if x < 0:
        return -go_round(-x)
    f = math.floor(x)
    return f + 1 if x - f >= 0.5 else f


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Upstream ``helper.DefaultNormalizeScore``."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = max_priority * s.score // max_count
        s.score = max_priority - score if reverse else score


def default_normalize_values(max_priority: int, reverse: bool, values: list[int]) -> list[int]:
    """``default_normalize_score`` on plain values as one array operation (the batched path)."""
    arr = np.asarray(values, dtype=np.int64)
    max_count = int(arr.max()) if len(arr) else 0
    if max_count <= 0:
        return [max_priority] * len(values) if reverse else list(values)
    score = max_priority * arr // max_count
    return (max_priority - score if reverse else score).tolist()


def default_normalize_array(max_priority: int, reverse: bool, arr: np.ndarray) -> np.ndarray:
    """``default_normalize_score`` on an int64 array (the batched path's ``batch_normalize``)."""
    max_count = int(arr.max()) if len(arr) else 0
    if max_count <= 0:
        return np.full(len(arr), max_priority, dtype=np.int64) if reverse else arr
    score = max_priority * arr // max_count
    return max_priority - score if reverse else score


def find_untolerated_taint(taints: tuple[Taint, ...], tolerations: tuple[Toleration, ...],
                           effects: tuple[str, ...] = ("NoSchedule", "NoExecute")) -> Taint | None:
    """The first taint with one of ``effects`` that no toleration tolerates."""
    for taint in taints:
        if taint.effect not in effects:
            continue
        for tol in tolerations:
            if tol.tolerates(taint):
                break
        else:
            return taint
    return None


def pod_matches_node_selector_and_affinity(pod: Pod, labels: dict[str, str], node_name: str) -> bool:
    """Upstream ``GetRequiredNodeAffinity(pod).Match(node)``: nodeSelector and required node affinity."""
    ns = pod.node_selector
    if ns:
        for k, v in ns.items():
            if labels.get(k) != v:
                return False
    req = pod.node_affinity_required
    if req is not None:
        return req.matches(labels, node_name)
    return True


__all__ = ["MAX_NODE_SCORE", "decode_plugin_args", "default_normalize_array", "default_normalize_score", "find_untolerated_taint", "go_div",
           "go_round", "pod_matches_node_selector_and_affinity"]
