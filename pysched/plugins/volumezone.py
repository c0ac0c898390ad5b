"""VolumeZone: the zone and region labels of a pod's bound PersistentVolumes must match the node's.

As upstream: PreFilter collects the topology labels (``topology.kubernetes.io/{zone,region}`` and their
beta forms; ``a__b`` lists several zones) of the PVs bound to the pod's ``persistentVolumeClaim`` volumes
(ephemeral volumes and unbound WaitForFirstConsumer claims are left out) and Skips when there are none.
Filter passes nodes without any topology label; otherwise each label must hold one of the PV's values (a
beta label of the PV may be matched by the node's GA label).
"""

from __future__ import annotations

from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import PRE_FILTER_SKIP, Status
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.model.storage import (
    LABEL_BETA_REGION,
    LABEL_BETA_ZONE,
    LABEL_REGION,
    LABEL_ZONE,
    MULTI_ZONE_DELIMITER,
    PersistentVolume,
)
from pysched.plugins.volumebinding import storage_of
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
TOPOLOGY_LABELS = (LABEL_BETA_ZONE, LABEL_BETA_REGION, LABEL_ZONE, LABEL_REGION)
_GA = {LABEL_BETA_ZONE: LABEL_ZONE, LABEL_BETA_REGION: LABEL_REGION}


@dataclass(slots=True, frozen=True)
class PVTopology:
    pv_name: str
    key: str
    values: frozenset[str]


class _State(StateData):
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[PVTopology]) -> None:
        self.topologies = topologies


def pvc_names(pod: Pod) -> list[str]:
    """Claim names of the pod's ``persistentVolumeClaim`` volumes (upstream leaves ephemeral volumes out)."""
    out = []
    for v in pod.volumes:
        claim = v.get("persistentVolumeClaim")
        if isinstance(claim, dict):
            out.append(str(claim.get("claimName") or ""))
    return out


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """Upstream ``getPVTopologies``: a label whose list holds an empty zone is ignored."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
        if any(not z for z in zones):
            continue
        out.append(PVTopology(pv.name, key, frozenset(zones)))
    return out


class VolumeZone(PreFilterPlugin, FilterPlugin):
    NAME = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self._own: list = []

    def _topologies(self, pod: Pod) -> tuple[list[PVTopology], Status | None]:
        """Upstream ``getPVbyPod``."""
        storage = storage_of(self.handle, self._own)
        out: list[PVTopology] = []
        for name in pvc_names(pod):
            if not name:
                return [], Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = storage.claim(pod.namespace, name)
            if pvc is None:
                return [], Status.unresolvable(f'persistentvolumeclaim "{name}" not found')
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return [], Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                cls = storage.classes.get(pvc.storage_class)
                if cls is None:
                    return [], Status.unresolvable(f'storageclass.storage.k8s.io "{pvc.storage_class}" not found')
                if cls.wait_for_first_consumer:
                    continue  # not bound yet: VolumeBinding decides
                return [], Status.unresolvable("PersistentVolume had no name")
            pv = storage.volume(pvc.volume_name)
            if pv is None:
                return [], Status.unresolvable(f'persistentvolume "{pvc.volume_name}" not found')
            out.extend(pv_topologies(pv))
        return out, None

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, PRE_FILTER_SKIP  # no claim: no topology (what the steps below conclude)
        topologies, st = self._topologies(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, PRE_FILTER_SKIP
        state.write(PRE_FILTER_STATE_KEY, _State(topologies))
        return None, None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is not None:
            topologies = s.topologies
        else:
            topologies, st = self._topologies(pod)
            if st is not None:
                return st
        labels = node.node.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None  # a node without topology labels (a single-zone cluster) accepts every volume
        for t in topologies:
            v = labels.get(t.key)
            if v is None:
                v = labels.get(_GA.get(t.key, t.key))
            if v is None or v not in t.values:
                return Status.unresolvable(ERR_REASON_CONFLICT)
        return None


PLUGIN = VolumeZone


def factory(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle)
