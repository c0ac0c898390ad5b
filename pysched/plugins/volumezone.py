"""VolumeZone: the zones of a pod's bound PersistentVolumes must match the node's.

Pods without PVCs Skip at PreFilter. Bound PVs need PVC/PV objects the simulation does not model yet;
pods with PVCs are not simulated by the scheduler (a later issue), so they pass here.
"""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"


def pvc_names(pod: Pod) -> list[str]:
    """Claim names of the pod's PVC volumes, and ``<pod>-<volume>`` for generic ephemeral volumes."""
    out = []
    for v in pod.volumes:
        claim = v.get("persistentVolumeClaim")
        if isinstance(claim, dict):
            out.append(str(claim.get("claimName") or ""))
        elif v.get("ephemeral") is not None:
            out.append(f"{pod.name}-{v.get('name', '')}")
    return out


class VolumeZone(PreFilterPlugin, FilterPlugin):
    NAME = NAME

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pvc_names(pod):
            return None, Status(Code.Skip)
        # PV topologies are not modelled yet (see the module docstring): no constraint is recorded.
        return None, Status(Code.Skip)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        return None


PLUGIN = VolumeZone


def factory(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone()
