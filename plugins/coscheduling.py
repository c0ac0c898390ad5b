"""Coscheduling: the pods of a group start together or not at all (gang scheduling at Permit).

A pod joins group ``G`` of its namespace with the label ``pod-group.scheduling.example/name: G``; the
annotation ``pod-group.scheduling.example/min-member: "N"`` says how many members must have a node before
any of them binds (without it, N is 1 and the pod is scheduled alone).

- PreFilter: a group with fewer than N pods in the snapshot can never start: its pods are rejected.
- Permit: a member that fits waits, reserved on its node (later pods see it), until N members of the
  group have a node; the member that completes the group lets every waiting sibling bind.
- PostFilter: a member that fits nowhere releases its waiting siblings, so they give their nodes back.
- Unreserve: a member that loses its node (rejected while waiting) releases its siblings too.

Members still waiting at the end of a pass are reported Unschedulable with the reason they waited.

    profiles:
    - plugins:
        multiPoint:
          enabled: [{name: Coscheduling}]
      pluginConfig:
      - name: Coscheduling
        args: {permitWaitingTimeSeconds: 60}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pysched.errors import ConfigError
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import (
    Handle,
    NodeToStatus,
    PermitPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
)
from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass  # the methods compiled on first use, not at every run's load
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "Coscheduling"
GROUP_LABEL = "pod-group.scheduling.example/name"
MIN_MEMBER_ANNOTATION = "pod-group.scheduling.example/min-member"


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    permit_waiting_time_seconds: int = 60


def decode_args(raw: Mapping[str, Any] | None) -> CoschedulingArgs:
    if raw is None:
        return CoschedulingArgs()
    if not isinstance(raw, Mapping):
        raise ConfigError(f"args must be an object, got {type(raw).__name__}")
    for key in raw:
        if key != "permitWaitingTimeSeconds":
            raise ConfigError(f"unknown field {key!r} (known: permitWaitingTimeSeconds)", field=str(key))
    value = raw.get("permitWaitingTimeSeconds", 60)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"must be a positive number of seconds, got {value!r}", field="permitWaitingTimeSeconds")
    return CoschedulingArgs(value)


@dataclass(frozen=True, slots=True)
class Group:
    namespace: str
    name: str
    min_member: int

    def __str__(self) -> str:
        return f'pod group "{self.namespace}/{self.name}"'

    def has(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and pod.labels.get(GROUP_LABEL) == self.name


def group_of(pod: Pod) -> Group | str | None:
    """The pod's group; ``None`` without the label; a message when the min-member annotation is bad."""
    name = pod.labels.get(GROUP_LABEL)
    if not name:
        return None
    raw = pod.meta.annotations.get(MIN_MEMBER_ANNOTATION, "1")
    try:
        min_member = int(str(raw))
    except ValueError:
        min_member = 0
    if min_member < 1:
        return f"annotation {MIN_MEMBER_ANNOTATION}={raw!r} is not a positive integer"
    return Group(pod.namespace, name, min_member)


class Coscheduling(PreFilterPlugin, PostFilterPlugin, ReservePlugin, PermitPlugin):
    NAME = NAME

    def __init__(self, args: CoschedulingArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle

    # ------------------------------------------------------------------ helpers
    def _waiting_siblings(self, group: Group, pod: Pod) -> list[Any]:
        waiting = getattr(self.handle, "waiting_pods", None)
        if waiting is None:
            return []
        return [wp for wp in waiting() if wp.pod is not pod and group.has(wp.pod)]

    def _members_with_node(self, group: Group, pod: Pod) -> int:
        """Members bound, running or reserved (waiting) on a node, this pod aside."""
        placed = self.handle.snapshot.pod_node
        return sum(1 for p in self.handle.cluster.pods if p is not pod and group.has(p) and p.key in placed)

    # ------------------------------------------------------------------ PreFilter
    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        group = group_of(pod)
        if group is None:
            return None, None
        if isinstance(group, str):
            return None, Status.unresolvable(group)
        total = sum(1 for p in self.handle.cluster.pods if group.has(p))
        if total < group.min_member:
            return None, Status.unresolvable(f"{group} has {total} pod(s), fewer than its min member "
                                             f"{group.min_member}")
        return None, None

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: CycleState, pod: Pod,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        group = group_of(pod)
        if not isinstance(group, Group) or group.min_member <= 1:
            return None, Status(Code.Unschedulable)
        siblings = self._waiting_siblings(group, pod)
        for wp in siblings:
            wp.reject(NAME, f"{group} cannot start: member {pod.key} fits on no node")
        released = f" ({len(siblings)} waiting member(s) released)" if siblings else ""
        return None, Status.unschedulable(f"{group} cannot start: {pod.key} fits on no node{released}")

    # ------------------------------------------------------------------ Reserve / Unreserve
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        group = group_of(pod)
        if not isinstance(group, Group) or group.min_member <= 1:
            return
        for wp in self._waiting_siblings(group, pod):
            wp.reject(NAME, f"{group} cannot start: member {pod.key} gave up its node {node_name}")

    # ------------------------------------------------------------------ Permit
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        group = group_of(pod)
        if not isinstance(group, Group) or group.min_member <= 1:
            return None, 0.0
        ready = self._members_with_node(group, pod) + 1
        if ready >= group.min_member:
            for wp in self._waiting_siblings(group, pod):
                wp.allow(NAME)
            return None, 0.0
        reason = (f"{group} has {ready} of {group.min_member} members with a node; "
                  f"waiting for {group.min_member - ready} more")
        return Status(Code.Wait, reason), float(self.args.permit_waiting_time_seconds)


PLUGIN = Coscheduling


def factory(args: CoschedulingArgs | None, handle: Handle) -> Coscheduling:
    return Coscheduling(args if args is not None else CoschedulingArgs(), handle)
