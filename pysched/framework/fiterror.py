"""The FailedScheduling text (upstream ``FitError.Error``)."""

from __future__ import annotations

from collections import Counter

from pysched.framework.interface import NodeToStatus

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


def fit_error_message(num_all_nodes: int, statuses: NodeToStatus, prefilter_msg: str, postfilter_msg: str) -> str:
    text = f"0/{num_all_nodes} nodes are available:"
    if prefilter_msg:
        text += f" {prefilter_msg}."
    else:
        counts: dict[str, int] = {}
        # Rejected nodes mostly share Status objects (one per plugin and reason set; a Status hashes by
        # identity): count each object's nodes in C, then its reasons once per object.
        for st, k in Counter(statuses.statuses.values()).items():
            for r in st.reasons:
                counts[r] = counts.get(r, 0) + k
        absent = num_all_nodes - len(statuses.statuses)
        if absent > 0:
            for r in statuses.absent.reasons:
                counts[r] = counts.get(r, 0) + absent
        parts = sorted(f"{n} {r}" for r, n in counts.items())
        if parts:
            text += " " + ", ".join(parts) + "."
    if postfilter_msg:
        text += " " + postfilter_msg
    return text
