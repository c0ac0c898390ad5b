"""What would make a pod fit a node: the change a Filter plugin's what-if proposes, and the optional
extension point through which a plugin proposes it.

A Filter plugin, in-tree or out-of-tree, that also subclasses :class:`WhatIfPlugin` is asked for a change
whenever it rejects a pod on one of the nodes nearest to accepting it (``pysched explain``); pysched applies
the change to copies, runs PreFilter and Filter again and reports whether the verdict flips. Plugins
without it get the built-in suggestions of ``scheduler/whatif.py`` where one exists, else none.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pysched.model.objects import Pod, Toleration

if TYPE_CHECKING:
    from pysched.framework.cycle_state import CycleState
    from pysched.framework.status import Status
    from pysched.snapshot.nodeinfo import NodeInfo

# kinds of change, one per filter plugin that has a what-if
RESOURCES, TAINTS, NODE_AFFINITY, PORTS, SPREAD, INTER_POD, UNSCHEDULABLE, DEVICES, OTHER = (
    "resources", "taints", "node-affinity", "ports", "spread", "inter-pod", "unschedulable", "devices", "other")


@dataclass(slots=True)
class Eviction:
    """A running pod to take off a node."""

    pod: str
    node: str
    priority: int
    obj: Pod | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {"pod": self.pod, "node": self.node, "priority": self.priority}


@dataclass(slots=True)
class Change:
    """The smallest change found for one failing filter plugin on one node, and whether it was checked.

    ``details`` holds the facts the report words (kind-specific, JSON-able); the modification is
    ``evict`` + ``add_tolerations`` + ``set_labels`` + ``remove_labels`` + ``uncordon``. A change
    without a modification explains why no change on this node can help.
    """

    plugin: str
    kind: str
    reason: str  # the plugin's verdict on the node now
    details: dict[str, Any] = field(default_factory=dict)
    evict: list[Eviction] = field(default_factory=list)
    add_tolerations: list[Toleration] = field(default_factory=list)
    set_labels: dict[str, str] = field(default_factory=dict)
    remove_labels: list[str] = field(default_factory=list)
    uncordon: bool = False
    checked: bool = False  # the filters ran again with the change applied
    flips: bool = False  # ... and this plugin then passed on the node
    after: str = ""  # the plugin's verdict after the change, when it still fails

    @property
    def has_modification(self) -> bool:
        return bool(self.evict or self.add_tolerations or self.set_labels or self.remove_labels or self.uncordon)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"plugin": self.plugin, "kind": self.kind, "reason": self.reason,
                             "details": self.details, "checked": self.checked, "flips": self.flips}
        if self.evict:
            d["evict"] = [e.to_dict() for e in self.evict]
        if self.add_tolerations:
            d["add_tolerations"] = [toleration_dict(t) for t in self.add_tolerations]
        if self.set_labels:
            d["set_labels"] = dict(self.set_labels)
        if self.remove_labels:
            d["remove_labels"] = list(self.remove_labels)
        if self.uncordon:
            d["uncordon"] = True
        if self.after:
            d["after"] = self.after
        return d


def toleration_dict(t: Toleration) -> dict:
    return {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect))
            if v}


class WhatIfPlugin(ABC):
    """Optional: a Filter plugin that can say what would make it accept a pod on a node."""

    @abstractmethod
    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change | None:
        """The smallest change after which this plugin would pass ``pod`` on ``node``, which it rejected
        with ``status``; ``node`` is the node as the filters saw it (nominated pods of at least the pod's
        priority added) and ``state`` the cycle's PreFilter state. ``None``: no change on this node helps.
        The change need not be checked: pysched checks it."""
