"""VolumeRestrictions: inline disks that cannot be shared, and ReadWriteOncePod claims already in use.

As upstream: an inline GCE PD, AWS EBS, RBD or iSCSI disk conflicts with the same disk of a pod on the node
(unless both mount it read-only, where the type allows). PreFilter looks up the pod's
``persistentVolumeClaim`` claims (a missing one rejects the pod) and counts those with the
ReadWriteOncePod access mode that a scheduled pod already uses, cluster-wide; the count makes Filter
reject every node. AddPod/RemovePod keep the count right for nominated pods and preemption victims, so
preempting the pod that holds the claim makes room. PreFilter Skips when there is neither an inline disk
nor a conflicting claim.
"""

from __future__ import annotations

from collections.abc import Mapping

from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import PRE_FILTER_SKIP, Status
from pysched.model.objects import Pod
from pysched.model.storage import READ_WRITE_ONCE_POD
from pysched.plugins.volumebinding import storage_of
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_RWOP_CONFLICT = ("node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
                            "already in-use by another pod")
_RESTRICTED_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")


class _State(StateData):
    __slots__ = ("conflicting_pvc_ref_count", "rwop_pvcs")

    def __init__(self, rwop_pvcs: frozenset[str], conflicting: int) -> None:
        self.rwop_pvcs = rwop_pvcs
        self.conflicting_pvc_ref_count = conflicting

    def clone(self) -> _State:
        return _State(self.rwop_pvcs, self.conflicting_pvc_ref_count)

    def update_with_pod(self, pod: Pod, sign: int) -> None:
        n = 0
        for v in pod.volumes:
            claim = v.get("persistentVolumeClaim")
            if isinstance(claim, Mapping) and claim.get("claimName") in self.rwop_pvcs:
                n += 1
        self.conflicting_pvc_ref_count += sign * n


def _src(volume: Mapping, kind: str) -> Mapping | None:
    s = volume.get(kind)
    return s if isinstance(s, Mapping) else None


def needs_restrictions_check(volume: Mapping) -> bool:
    return any(_src(volume, k) is not None for k in _RESTRICTED_SOURCES)


def is_volume_conflict(volume: Mapping, other: Pod) -> bool:
    """Whether ``volume`` of the incoming pod clashes with a volume of ``other`` (upstream ``isVolumeConflict``)."""
    gce, aws, iscsi, rbd = (_src(volume, k) for k in ("gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"))
    for ev in other.volumes:
        egce = _src(ev, "gcePersistentDisk")
        if gce is not None and egce is not None:
            if gce.get("pdName", "") == egce.get("pdName", "") and not (gce.get("readOnly") and egce.get("readOnly")):
                return True
        eaws = _src(ev, "awsElasticBlockStore")
        if aws is not None and eaws is not None:
            if aws.get("volumeID", "") == eaws.get("volumeID", ""):
                return True
        eiscsi = _src(ev, "iscsi")
        if iscsi is not None and eiscsi is not None:
            if iscsi.get("iqn", "") == eiscsi.get("iqn", "") and not (iscsi.get("readOnly") and eiscsi.get("readOnly")):
                return True
        erbd = _src(ev, "rbd")
        if rbd is not None and erbd is not None:
            # API defaulting sets pool to "rbd"
            if (set(rbd.get("monitors") or ()) & set(erbd.get("monitors") or ())
                    and (rbd.get("pool") or "rbd") == (erbd.get("pool") or "rbd")
                    and rbd.get("image", "") == erbd.get("image", "")
                    and not (rbd.get("readOnly") and erbd.get("readOnly"))):
                return True
    return False


def satisfies_volume_conflicts(pod: Pod, node: NodeInfo) -> bool:
    for v in pod.volumes:
        if not needs_restrictions_check(v):
            continue
        for existing in node.pods:
            if is_volume_conflict(v, existing):
                return False
    return True


class VolumeRestrictions(PreFilterPlugin, FilterPlugin):
    NAME = NAME
    HAS_EXTENSIONS = True

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self._own: list = []

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if not pod.volumes:
            return None, PRE_FILTER_SKIP  # no claim, nothing to check: what the steps below conclude
        needs_check = any(needs_restrictions_check(v) for v in pod.volumes)
        storage = storage_of(self.handle, self._own)
        rwop: set[str] = set()
        for v in pod.volumes:
            ref = v.get("persistentVolumeClaim")
            if not isinstance(ref, Mapping):
                continue
            name = str(ref.get("claimName") or "")
            pvc = storage.claim(pod.namespace, name)
            if pvc is None:
                return None, Status.unresolvable(f'persistentvolumeclaim "{name}" not found')
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        # at most one scheduled pod can use a ReadWriteOncePod claim: one conflict per claim in use
        s = _State(frozenset(rwop), sum(1 for name in rwop if storage.is_used(f"{pod.namespace}/{name}")))
        if not needs_check and s.conflicting_pvc_ref_count == 0:
            return None, PRE_FILTER_SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return None

    def remove_pod(self, state: CycleState, pod: Pod, pod_to_remove: Pod, node: NodeInfo) -> Status | None:
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return None

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if not satisfies_volume_conflicts(pod, node):
            return Status.unschedulable(ERR_REASON_DISK_CONFLICT)
        s = state.read(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'cannot read "{PRE_FILTER_STATE_KEY}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return Status.unschedulable(ERR_REASON_RWOP_CONFLICT)
        return None


PLUGIN = VolumeRestrictions


def factory(args: None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle)
