"""VolumeBinding: PersistentVolumeClaim binding.

Pods without PVCs (and without generic ephemeral volumes) are handled as upstream: PreFilter writes an
empty state and Skips, PreScore Skips (StorageCapacityScoring is off), Reserve marks everything bound and
PreBind does nothing. Pods with PVCs need PVC/PV/StorageClass objects the simulation does not model yet;
the scheduler does not simulate them (a later issue), so they pass here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import (
    FilterPlugin,
    Handle,
    PreBindPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ReservePlugin,
    ScorePlugin,
)
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(slots=True)
class _VolumeBindingArgs:
    """Used only while ``pysched.framework.plugin_args`` is unavailable; same field names."""

    bind_timeout_seconds: int = 600
    shape: list | None = None


def decode_args(raw: Any) -> Any:
    from pysched.framework import plugin_args
    return plugin_args.DECODERS[NAME](raw, "args")


class _State(StateData):
    __slots__ = ("has_pvcs", "all_bound", "has_static_bindings")

    def __init__(self, has_pvcs: bool = False) -> None:
        self.has_pvcs = has_pvcs
        self.all_bound = False
        self.has_static_bindings = False


def pod_has_pvcs(pod: Pod) -> bool:
    return any(v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None for v in pod.volumes)


def _missing_state() -> Status:
    return Status.as_error("not found")


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, PreScorePlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, args: Any = None) -> None:
        self.args = args if args is not None else _VolumeBindingArgs()

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod_has_pvcs(pod):
            state.write(STATE_KEY, _State())
            return None, Status(Code.Skip)
        # Claims are not modelled yet (see the module docstring).
        state.write(STATE_KEY, _State(has_pvcs=True))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if state.read(STATE_KEY) is None:
            return _missing_state()
        return None

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        # No volume capacity scorer unless StorageCapacityScoring (alpha, off) is enabled.
        return Status(Code.Skip)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        s.all_bound = True
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if s.all_bound:
            return Status(Code.Skip)
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if state.read(STATE_KEY) is None:
            return _missing_state()
        return None


PLUGIN = VolumeBinding


def factory(args: Any, handle: Handle) -> VolumeBinding:
    return VolumeBinding(args)
