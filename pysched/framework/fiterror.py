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
        # Rejected nodes mostly share Status objects (one per plugin and reason set): count each object's
        # nodes in C, then its reasons once per object.
        sts = list(statuses.statuses.values())
        nodes_of = Counter(map(id, sts))
        for key, st in dict(zip(map(id, sts), sts, strict=True)).items():
            k = nodes_of[key]
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
