"""DynamicResources (DRA): ResourceClaims allocated by the scheduler.

In the default v1.34 profile (DynamicResourceAllocation on) this plugin runs for every pod. For pods
without resource claims it behaves as upstream: PreEnqueue passes, PreFilter writes an empty state and
Skips, Reserve/PreBind do nothing, and PostFilter answers ``no new claims to deallocate`` (or Error
``not found`` when PreFilter never ran because an earlier PreFilter rejected the pod).
Allocating claims needs ResourceClaim, ResourceSlice and DeviceClass objects the simulation does not
model yet; the scheduler does not simulate pods with claims (a later issue).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import (
    FilterPlugin,
    Handle,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    ReservePlugin,
)
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "DynamicResources"
STATE_KEY = NAME
MSG_NO_NEW_CLAIMS = "no new claims to deallocate"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_NOT_SCHEDULABLE = "still not schedulable"


@dataclass(slots=True)
class _DynamicResourcesArgs:
    """Used only while ``pysched.framework.plugin_args`` is unavailable; same field names."""

    filter_timeout: float | None = None


def decode_args(raw: Any) -> Any:
    from pysched.framework import plugin_args
    return plugin_args.DECODERS[NAME](raw, "args")


class _State(StateData):
    """The pod's claims as PreFilter saw them; empty when the plugin has nothing to do."""

    __slots__ = ("claims",)

    def __init__(self, claims: list[dict] | None = None) -> None:
        self.claims = claims or []


def _missing_state() -> Status:
    return Status.as_error("not found")


class DynamicResources(PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, ReservePlugin,
                       PreBindPlugin):
    NAME = NAME

    def __init__(self, args: Any = None) -> None:
        self.args = args if args is not None else _DynamicResourcesArgs()

    def pre_enqueue(self, pod: Pod) -> Status | None:
        # Pods with claims would wait here until every claim exists (later issue).
        return None

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        s = _State()
        state.write(STATE_KEY, s)  # written before anything can reject, as upstream
        if not pod.resource_claims:
            return None, Status(Code.Skip)
        s.claims = list(pod.resource_claims)  # allocation is a later issue
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if state.read(STATE_KEY) is None:
            return _missing_state()
        return None

    def post_filter(self, state: CycleState, pod: Pod,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        s = state.read(STATE_KEY)
        if s is None:
            return None, _missing_state()
        if not s.claims:
            return None, Status.unschedulable(MSG_NO_NEW_CLAIMS)
        # No claim is allocated in the simulation yet, so none can be deallocated.
        return None, Status.unschedulable(MSG_STILL_NOT_SCHEDULABLE)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if state.read(STATE_KEY) is None:
            return _missing_state()
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if not s.claims:
            return Status(Code.Skip)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if state.read(STATE_KEY) is None:
            return _missing_state()
        return None


PLUGIN = DynamicResources


def factory(args: Any, handle: Handle) -> DynamicResources:
    return DynamicResources(args)
