"""One abstract class per extension point, mirroring kube-scheduler's framework interfaces.

A plugin is a class with ``NAME`` that inherits the extension points it implements. Every method
returns a ``Status`` or ``None`` (``None`` means Success, as a nil status does upstream).
In-tree and out-of-tree plugins use exactly this API.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pysched.framework.cycle_state import CycleState
from pysched.framework.status import Status
from pysched.lazyclass import dataclass

if TYPE_CHECKING:
    import random

    from pysched.framework.extender import HTTPExtender
    from pysched.framework.runtime import Framework
    from pysched.model.objects import Pod
    from pysched.snapshot.cluster import Cluster, ClusterState
    from pysched.snapshot.nodeinfo import NodeInfo

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_EXTENDER_PRIORITY = 10


class WaitingPod(Protocol):
    """A pod held at Permit, as plugins see it (upstream's ``WaitingPod``)."""

    pod: Pod
    node_name: str

    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str | None = None) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class WaitingPodMap(Protocol):
    """Upstream's waiting-pods map (the scheduler layer implements it)."""

    def waiting_pods(self) -> Sequence[WaitingPod]: ...

    def get_waiting_pod(self, key: str) -> WaitingPod | None: ...

    def allow(self, key: str, plugin: str | None = None) -> bool: ...

    def reject_waiting_pod(self, key: str, plugin: str = "", message: str = "removed") -> bool: ...


class Handle:
    """What plugins may reach besides their arguments (upstream's ``framework.Handle``), given to it
    when it is built: the cluster state, the profile's framework, the HTTP extenders, the pods waiting
    on Permit and preemption's random source."""

    def __init__(self, snapshot: ClusterState, profile_name: str = "default-scheduler", *, batched: bool = True,
                 extenders: Sequence[HTTPExtender] = (), waiting: WaitingPodMap | None = None,
                 preemption_rng: random.Random | None = None) -> None:
        # the cluster as this simulation has changed it (upstream's SnapshotSharedLister); not ``state``,
        # which is every plugin method's CycleState
        self.snapshot = snapshot
        self.profile_name = profile_name
        self._framework: Framework | None = None  # the Framework that owns the plugins attaches itself
        # True: plugins may use their batched paths and counts kept across cycles; False: the per-node
        # reference path (the same decisions, checked by the conformance suite on both paths)
        self.batched = batched
        self.extenders: Sequence[HTTPExtender] = extenders
        self.waiting = waiting
        # None: preemption starts at offset 0 (deterministic); a Random: upstream's random offset
        self.preemption_rng = preemption_rng

    # The pods held at Permit (upstream's IterateOverWaitingPods, GetWaitingPod, ...).
    def waiting_pods(self) -> Sequence[WaitingPod]:
        return self.waiting.waiting_pods() if self.waiting is not None else []

    def get_waiting_pod(self, pod_key: str) -> WaitingPod | None:
        return self.waiting.get_waiting_pod(pod_key) if self.waiting is not None else None

    def allow(self, pod_key: str, plugin: str | None = None) -> bool:
        return self.waiting.allow(pod_key, plugin) if self.waiting is not None else False

    def reject_waiting_pod(self, pod_key: str, plugin: str = "", message: str = "removed") -> bool:
        if self.waiting is None:
            return False
        return self.waiting.reject_waiting_pod(pod_key, plugin, message)

    @property
    def framework(self) -> Framework:
        """The profile's framework (upstream's Handle is the framework itself)."""
        if self._framework is None:
            raise RuntimeError("this handle belongs to no framework yet: a plugin's factory must not use it")
        return self._framework

    @framework.setter
    def framework(self, fwk: Framework) -> None:
        self._framework = fwk

    @property
    def cluster(self) -> Cluster:
        """The loaded objects."""
        return self.snapshot.cluster

    @property
    def state(self) -> ClusterState:
        """The name ``snapshot`` had before 0.2, kept for out-of-tree plugins written against it."""
        return self.snapshot


class Plugin(ABC):  # noqa: B024 - a marker base; extension points add the abstract methods
    NAME: ClassVar[str] = ""
    name: ClassVar[str] = ""  # set from NAME for every subclass (a plain attribute: read on hot paths)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = cls.NAME


@dataclass(slots=True)
class QueuedPodInfo:
    pod: Pod
    timestamp: float  # when the pod entered the queue (creation time for the simulation)
    attempts: int = 0


@dataclass(slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin allows; ``None`` node_names means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return self
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(self.node_names & other.node_names)  # type: ignore[operator]


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class PostFilterResult:
    nominated_node_name: str = ""
    victims: list[Pod] = field(default_factory=list)
    details: dict = field(default_factory=dict)  # trace material (candidates, victims per node, ...)


class NodeToStatus:
    """Upstream ``NodeToStatus``: explicit per-node statuses plus one status for every absent node.

    The batched Filter may ``defer`` the statuses of the nodes it rejected: they count in ``len`` at once
    and are filled in when ``statuses`` is first read (a pod that gets a node usually never reads them)."""

    __slots__ = ("_absent", "_deferred", "_deferred_len", "_statuses")

    def __init__(self, statuses: dict[str, Status] | None = None, absent: Status | None = None) -> None:
        self._statuses = statuses if statuses is not None else {}
        self._absent = absent  # built when first read: most cycles never read it
        self._deferred: Callable[[dict[str, Status]], None] | None = None
        self._deferred_len = 0

    @property
    def absent(self) -> Status:
        """The status of every node without one of its own (UnschedulableAndUnresolvable by default)."""
        if self._absent is None:
            self._absent = Status.unresolvable()
        return self._absent

    @absent.setter
    def absent(self, value: Status) -> None:
        self._absent = value

    @property
    def statuses(self) -> dict[str, Status]:
        if self._deferred is not None:
            fill, self._deferred, self._deferred_len = self._deferred, None, 0
            fill(self._statuses)
        return self._statuses

    @statuses.setter
    def statuses(self, value: dict[str, Status]) -> None:
        self._deferred, self._deferred_len = None, 0
        self._statuses = value

    def defer(self, count: int, fill: Callable[[dict[str, Status]], None]) -> None:
        """``fill`` adds the statuses of ``count`` nodes not in the map yet, when they are first read.
        Only onto an empty map (else at once), so that ``len`` and the map's order are what eager
        filling gives."""
        if self._deferred is not None or self._statuses:
            fill(self.statuses)
            return
        self._deferred, self._deferred_len = fill, count

    def get(self, node: str) -> Status:
        return self.statuses.get(node, self.absent)

    def set(self, node: str, status: Status) -> None:
        self.statuses[node] = status

    def __len__(self) -> int:
        return len(self._statuses) + self._deferred_len

    def nodes_for_code(self, nodes: list[NodeInfo], code: Any) -> list[NodeInfo]:
        """Nodes whose status (explicit, else absent) has ``code``, in the given order."""
        get, absent = self.statuses.get, self.absent
        return [n for n in nodes if get(n.name, absent).code == code]


class PreEnqueuePlugin(Plugin):
    @abstractmethod
    def pre_enqueue(self, pod: Pod) -> Status | None: ...


class QueueSortPlugin(Plugin):
    @abstractmethod
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class PreFilterPlugin(Plugin):
    #: True when the plugin implements add_pod/remove_pod (upstream PreFilterExtensions)
    HAS_EXTENSIONS: ClassVar[bool] = False

    @abstractmethod
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]: ...

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: NodeInfo) -> Status | None:
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> Status | None:
        return None

    def remove_pod_changes(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> bool:
        """Whether ``remove_pod`` would change anything in ``state`` (True when the plugin cannot tell):
        preemption skips the dry run of a node whose victims change no PreFilter state."""
        return True

    def removal_check(self, state: CycleState, pod: Pod) -> Callable[[list[Pod], NodeInfo], bool] | None:
        """``remove_pod_changes`` for one preemption's many nodes: a function telling whether removing
        any of the given pods of a node would change ``state``; None when no removal would. The state
        read and what depends only on ``pod`` are done once."""
        def changes(pods: list[Pod], node: NodeInfo) -> bool:
            return any(self.remove_pod_changes(state, pod, p, node) for p in pods)
        return changes


class FilterPlugin(Plugin):
    @abstractmethod
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None: ...


class PostFilterPlugin(Plugin):
    @abstractmethod
    def post_filter(self, state: CycleState, pod: Pod,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]: ...


class PreScorePlugin(Plugin):
    @abstractmethod
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None: ...


class ScorePlugin(Plugin):
    HAS_NORMALIZE: ClassVar[bool] = False

    @abstractmethod
    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]: ...

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        return None

    def score_nodes(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> tuple[list[int], Status | None]:
        """Every node's score, in order; plugins may override it with a faster loop giving the same
        numbers. A non-success status stops the loop."""
        out: list[int] = []
        for n in nodes:
            s, st = self.score(state, pod, n)
            if st is not None and not st.is_success():
                return out, st
            out.append(s)
        return out, None


class ReservePlugin(Plugin):
    @abstractmethod
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


class PermitPlugin(Plugin):
    @abstractmethod
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]: ...


class PreBindPlugin(Plugin):
    @abstractmethod
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class BindPlugin(Plugin):
    @abstractmethod
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None: ...


class PostBindPlugin(Plugin):
    @abstractmethod
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


EXTENSION_POINTS: dict[str, type[Plugin]] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": PostBindPlugin,
}


def extension_points_of(cls: type) -> list[str]:
    return [name for name, base in EXTENSION_POINTS.items() if issubclass(cls, base)]
