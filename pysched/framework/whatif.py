"""What would make a pod fit a node: the change a Filter plugin's what-if proposes, and the optional
extension point through which a plugin proposes it.

A Filter plugin, in-tree or out-of-tree, that also subclasses :class:`WhatIfPlugin` is asked for a change
whenever it rejects a pod on one of the nodes nearest to accepting it (``pysched explain``); pysched applies
the change to copies, runs PreFilter and Filter again and reports whether the verdict flips. Plugins
without it get no suggestion. Every in-tree Filter plugin with a suggestion offers it this way; the
explain package (``scheduler/explain/``) only asks, checks and reports.

A plugin that needs more than its node (every node of the cluster, the other nodes' verdicts, or checks
while it looks for the smallest change) declares a ``ctx`` parameter and receives a :class:`WhatIfContext`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from pysched.lazyclass import dataclass
from pysched.model.objects import Pod, Taint, Toleration

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pysched.framework.cycle_state import CycleState
    from pysched.framework.status import Status
    from pysched.model.labels import LabelSelector, Requirement
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


# ---------------------------------------------------------------------------------------------- words for details
def toleration_dict(t: Toleration) -> dict:
    return {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect))
            if v}


def taint_dict(t: Taint) -> dict:
    return {"key": t.key, "value": t.value, "effect": t.effect}


def selector_text(sel: LabelSelector) -> str:
    """``app=web,tier in (a,b),!legacy`` (``<nothing>`` / ``<everything>`` for the degenerate ones)."""
    if sel.nothing:
        return "<nothing>"
    if not sel.requirements:
        return "<everything>"
    return ",".join(requirement_text(r) for r in sel.requirements)


def requirement_text(r: Requirement) -> str:
    values = sorted(r.values)
    if r.op == "In":
        return f"{r.key}={values[0]}" if len(values) == 1 else f"{r.key} in ({','.join(values)})"
    if r.op == "NotIn":
        return f"{r.key}!={values[0]}" if len(values) == 1 else f"{r.key} notin ({','.join(values)})"
    if r.op == "Exists":
        return r.key
    if r.op == "DoesNotExist":
        return f"!{r.key}"
    if r.op == "Gt":
        return f"{r.key}>{values[0]}"
    if r.op == "Lt":
        return f"{r.key}<{values[0]}"
    return f"{r.key} {r.op} {values}"


# ---------------------------------------------------------------------------------------------- the extension point
class WhatIfContext(Protocol):
    """What explain offers a plugin's what-if beyond its node (the ``ctx`` parameter)."""

    @property
    def nodes(self) -> Sequence[NodeInfo]:
        """Every node of the cluster as the simulation holds it (without nominated pods added)."""

    def node(self, name: str) -> NodeInfo:
        """One of :attr:`nodes`, by name."""

    def passing(self, plugin: str) -> list[str]:
        """The names, sorted, of the nodes the filters ran on (after PreFilter) that ``plugin`` passes."""

    def check(self, change: Change, node: str) -> bool:
        """Apply ``change`` alone to copies, run PreFilter and Filter again and record the outcome in
        ``change`` (``checked``, ``flips``, ``after``): whether ``change.plugin`` now passes on ``node``."""


class WhatIfPlugin(ABC):
    """Optional: a Filter plugin that can say what would make it accept a pod on a node."""

    @abstractmethod
    def what_would_fit(self, state: CycleState, pod: Pod, node: NodeInfo, status: Status) -> Change | None:
        """The smallest change after which this plugin would pass ``pod`` on ``node``, which it rejected
        with ``status``; ``node`` is the node as the filters saw it (nominated pods of at least the pod's
        priority added) and ``state`` the PreFilter state in which the plugin rejected it. ``None``: no
        change on this node helps. The change need not be checked: pysched checks it.

        An implementation may add a keyword parameter ``ctx: WhatIfContext | None = None``; explain then
        passes its context (``None`` when called outside explain)."""
