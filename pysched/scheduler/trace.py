"""The trace of one scheduling cycle: built by the scheduler, read by every renderer."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Any

from pysched.framework.status import Status
from pysched.lazyclass import dataclass


class Outcome(StrEnum):
    """How a scheduling cycle ended: ``outcome`` in the JSON trace (``SCHEMA.md``)."""

    SCHEDULED = "Scheduled"
    UNSCHEDULABLE = "Unschedulable"
    NOMINATED = "Nominated"  # preemption made room on a node; the pod waits for its victims to go
    GATED = "Gated"  # PreEnqueue (scheduling gates) kept it out of the queue
    ERROR = "Error"
    WAITING = "Waiting"  # held at Permit; replaced by the final outcome once the wait ends


@dataclass(slots=True)
class CycleTrace:
    pass_no: int
    pod: str
    priority: int
    profile: str = ""
    outcome: Outcome | None = None  # set when the cycle ends
    node: str | None = None
    message: str | None = None
    preenqueue_reject: Status | None = None
    prefilter_reject: Status | None = None
    prefilter_nodes: list[str] | None = None
    filter: dict[str, Status] = field(default_factory=dict)  # first failing plugin per node
    filter_all: dict[str, dict[str, Status]] | None = None
    feasible: list[str] | None = None
    scores: dict[str, dict[str, int]] | None = None  # node -> plugin -> weighted normalized score
    nominated_node: str | None = None
    victims: list[str] | None = None
    nominated_node_before: str | None = None
    fast_path: bool = False
    postfilter_status: Status | None = None
    bound_by: str | None = None
    evaluated_nodes: int = 0
    preemption: Any = None  # PreemptionDetails
    error: str | None = None
    volume_binding: list[dict[str, str]] | None = None  # per claim: pvc, decision (bound|static|provision), pv, node
    dra_allocation: list[dict[str, Any]] | None = None  # per ResourceClaim: claim, allocated_in_cycle, devices

    def is_last(self, passes: int) -> bool:
        """Whether no later cycle of this pod can follow: it was bound, or this was the last pass (a pod
        waiting on Permit is neither until the wait ends)."""
        if self.outcome is Outcome.WAITING:
            return False
        return self.outcome is Outcome.SCHEDULED or self.pass_no >= passes

    def totals(self) -> dict[str, int]:
        return {n: sum(p.values()) for n, p in (self.scores or {}).items()}

    def to_dict(self, trace: bool) -> dict:
        """The JSON contract of ``SCHEMA.md``; with ``trace`` every key, else the short form."""
        d: dict[str, Any] = {"pass": self.pass_no, "pod": self.pod, "priority": self.priority,
                             "outcome": self.outcome._value_ if self.outcome is not None else ""}  # not .value: a
        # Python-level property of enum, a tenth of this method's cost
        if self.node is not None:
            d["node"] = self.node
        if self.preenqueue_reject is not None:
            d["preenqueue_reject"] = _status(self.preenqueue_reject)
        if self.prefilter_reject is not None:
            d["prefilter_reject"] = _status(self.prefilter_reject)
        if self.message is not None:
            d["message"] = self.message
        if self.nominated_node is not None:
            d["nominated_node"] = self.nominated_node
            d["victims"] = list(self.victims or [])
        if self.error is not None:
            d["error"] = self.error
        if self.volume_binding is not None:
            d["volume_binding"] = [dict(e) for e in self.volume_binding]
        if self.dra_allocation is not None:
            d["dra_allocation"] = [{**e, "devices": [dict(x) for x in e["devices"]]} for e in self.dra_allocation]
        if not trace:
            return d
        if self.profile:
            d["profile"] = self.profile
        if self.prefilter_nodes is not None:
            d["prefilter_nodes"] = self.prefilter_nodes
        if self.filter:
            d["filter"] = {n: _status(s) for n, s in self.filter.items()}
        if self.filter_all is not None:
            d["filter_all"] = {n: {p: _status(s, with_plugin=False) for p, s in ps.items()}
                               for n, ps in self.filter_all.items()}
        if self.feasible is not None:
            d["feasible"] = self.feasible
        if self.scores is not None:
            d["scores"] = {n: {"total": sum(p.values()), "plugins": dict(p)} for n, p in self.scores.items()}
        if self.nominated_node_before:
            d["nominated_node_before"] = self.nominated_node_before
        if self.fast_path:
            d["nominated_node_fast_path"] = True
        if self.postfilter_status is not None:
            d["postfilter_status"] = _status(self.postfilter_status, with_plugin=False)
        if self.bound_by:
            d["bound_by"] = self.bound_by
        return d


def _status(st: Status, with_plugin: bool = True) -> dict:
    d: dict[str, Any] = {"code": st.code.name}
    if with_plugin and st.plugin:
        d["plugin"] = st.plugin
    if st.reasons:
        d["reasons"] = list(st.reasons)
    return d
