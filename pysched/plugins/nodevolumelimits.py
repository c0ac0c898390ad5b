"""NodeVolumeLimits (upstream CSILimits): attachable-volume limits per CSI driver.

Only the pods without PVCs, generic ephemeral volumes or migratable in-tree volumes are fully handled
(PreFilter Skip). Counting attached volumes needs CSINode, PVC and PV objects that the simulation does
not model yet; pods with PVCs are not simulated by the scheduler (a later issue). Without CSINode
objects no driver has a limit, so Filter passes.
"""

from __future__ import annotations

from collections.abc import Mapping

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
# in-tree volume sources the CSI translation library can migrate inline
_INLINE_MIGRATABLE = ("gcePersistentDisk", "awsElasticBlockStore", "cinder", "azureDisk", "azureFile",
                      "vsphereVolume", "portworxVolume")


def counts_volume(volume: Mapping) -> bool:
    if volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None:
        return True
    return any(volume.get(k) is not None for k in _INLINE_MIGRATABLE)


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin):
    NAME = NAME

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if any(counts_volume(v) for v in pod.volumes):
            return None, None
        return None, Status(Code.Skip)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        # No CSINode objects are modelled, so no driver limit applies (see the module docstring).
        return None


PLUGIN = NodeVolumeLimits


def factory(args: None, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits()
