"""NodeVolumeLimits (upstream CSILimits): the number of volumes each CSI driver may attach to a node.

As upstream: PreFilter Skips pods without a claim, a generic ephemeral volume or a migratable inline
in-tree volume. Filter counts, per CSI driver with an ``allocatable.count`` in the node's CSINode, the
unique volumes (driver + volume handle) of the pods on the node and of the node's VolumeAttachments, and
rejects the node when the pod's new volumes would exceed the count. A claim's driver comes from its PV
(CSI, or the CSI driver an in-tree PV migrates to), else from its class's provisioner; in-tree volumes of
AWS EBS, GCE PD, Azure Disk, Cinder (and Portworx when the CSINode lists it as migrated) count against
their CSI driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from pysched.framework.batch import BatchVerdict, every_row_passes, no_statuses
from pysched.framework.cycle_state import CycleState, StateData
from pysched.framework.interface import FilterPlugin, Handle, PreFilterPlugin, PreFilterResult
from pysched.framework.status import PRE_FILTER_SKIP, Status
from pysched.model.objects import Pod
from pysched.model.storage import (
    CSI_DRIVER_OF_IN_TREE_PLUGIN,
    IN_TREE_PLUGIN_OF_SOURCE,
    CSINode,
    PersistentVolumeClaim,
    TranslationError,
    claim_of_volume,
    ephemeral_owner_error,
    in_tree_source,
    inline_csi_volume,
    translate_pv,
)
from pysched.plugins.volumebinding import storage_of
from pysched.snapshot.cluster import StorageState
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from pysched.snapshot.columns import NodeColumns

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
# upstream's random prefix of the handles it makes up for claims without a volume (only equality matters)
VOLUME_ID_PREFIX = "pysched-unbound"
_MIGRATION_ON = ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk", "kubernetes.io/cinder")
_PORTWORX = "kubernetes.io/portworx-volume"
# room of a row without a limit for a driver (no count of new volumes reaches it); limits beyond it: no verdict
_NO_LIMIT = 1 << 62


STATE_KEY = "PreFilter" + NAME


class _State(StateData):
    """The pod's own attachable volumes, per kind of CSINode (filled by Filter; shared by clones)."""

    __slots__ = ("new_volumes",)

    def __init__(self) -> None:
        self.new_volumes: dict[bool | None, dict[str, str] | _LookupError] = {}


class _LookupError(Exception):
    """A volume upstream cannot resolve: its message becomes the Filter status; ``unresolvable`` when the
    claim does not exist (UnschedulableAndUnresolvable), an Error otherwise."""

    def __init__(self, message: str, unresolvable: bool = False) -> None:
        super().__init__(message)
        self.unresolvable = unresolvable


def counts_volume(volume: Mapping) -> bool:
    """Whether PreFilter must run: a claim, a generic ephemeral volume or a migratable inline volume."""
    if volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None:
        return True
    return in_tree_source(volume) is not None


def migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Upstream ``isCSIMigrationOn`` (CSIMigrationPortworx is GA in v1.34)."""
    if csi_node is None or not plugin:
        return False
    if plugin in _MIGRATION_ON:
        return True
    if plugin == _PORTWORX:
        return plugin in csi_node.migrated_plugins()
    return False


def volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    if csi_node is None:
        return {}
    return {d.name: d.allocatable for d in csi_node.drivers if d.allocatable is not None}


def csi_kind(csi_node: CSINode | None) -> bool | None:
    """What the attachable volumes of a pod depend on in a CSINode: none (None), or whether it lists
    Portworx as migrated (every other migration is on whenever there is a CSINode)."""
    return None if csi_node is None else _PORTWORX in csi_node.migrated_plugins()


class _Rows:
    """Per node row of one ``NodeColumns``, what Filter reads of the node, for the batched verdict: its
    kind of CSINode, its limits, and, where it has some, its room per driver (limit - count of
    ``_usage``), the volumes its pods attach (indexed by volume) and whether ``_usage`` failed. Rows are
    read again when the columns read their node again (``row_log``: a pod joined or left) and when a
    claim or volume their usage read changed (``stale``)."""

    __slots__ = ("attached", "cols", "error", "kinds", "limited", "limits", "on_rows", "pos", "room", "storage",
                 "usable")

    def __init__(self, cols: NodeColumns, storage: StorageState) -> None:
        self.cols = cols
        self.storage = storage
        self.pos = len(cols.row_log)
        n = cols.n
        self.limits: list[dict[str, int]] = []
        # kind of CSINode -> (one CSINode of that kind, its rows)
        self.kinds: dict[bool | None, tuple[CSINode | None, np.ndarray]] = {}
        self.room: dict[str, np.ndarray] = {}
        self.error = np.zeros(n, dtype=bool)
        self.attached: list[dict[str, str]] = [{} for _ in range(n)]
        self.on_rows: dict[str, set[int]] = {}  # ``driver/handle`` -> the rows whose pods attach it
        kind_of: list[bool | None] = []
        for i, ni in enumerate(cols.infos):
            csi_node = storage.csi_nodes.get(ni.name)
            kind = csi_kind(csi_node)
            kind_of.append(kind)
            if kind not in self.kinds:
                self.kinds[kind] = (csi_node, np.zeros(0, dtype=bool))
            limits = volume_limits(csi_node)
            self.limits.append(limits)
            for driver, limit in limits.items():
                room = self.room.get(driver)
                if room is None:
                    room = self.room[driver] = np.full(n, _NO_LIMIT, dtype=np.int64)
                room[i] = limit
        for kind, (csi_node, _) in list(self.kinds.items()):
            self.kinds[kind] = (csi_node, np.fromiter((k is kind for k in kind_of), dtype=bool, count=n))
        self.limited = np.fromiter((bool(lim) for lim in self.limits), dtype=bool, count=n)
        # whether every limit fits the arrays (a CSINode's count is an int32 in the API)
        self.usable = all(-_NO_LIMIT < lim < _NO_LIMIT for limits in self.limits for lim in limits.values())

    def read(self, i: int, usage: tuple[dict[str, str], dict[str, int]] | _LookupError) -> None:
        """Row ``i`` from its ``_usage``."""
        for unique in self.attached[i]:
            rows = self.on_rows.get(unique)
            if rows is not None:
                rows.discard(i)
        if isinstance(usage, _LookupError):
            self.error[i] = True
            self.attached[i] = {}
            return
        self.error[i] = False
        attached, counts = usage
        self.attached[i] = attached
        for unique in attached:
            self.on_rows.setdefault(unique, set()).add(i)
        for driver, limit in self.limits[i].items():
            self.room[driver][i] = limit - counts.get(driver, 0)


class NodeVolumeLimits(PreFilterPlugin, FilterPlugin):
    NAME = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self._own: list = []
        # batched path: the attachable volumes of pods already on nodes, and of each node's VolumeAttachments,
        # kept until a claim or volume they read changes (StorageState.changes); the reference path computes
        # them on every node, as upstream
        self._kept: dict[object, tuple[object, object]] = {}  # key -> (whose, volumes or _LookupError)
        self._readers: dict[str, list[object]] = {}  # "claim:<ns/name>" / "volume:<name>" -> keys of _kept
        self._seen: tuple[StorageState | None, int] = (None, 0)
        self._stale: set[str] = set()  # nodes whose kept usage was dropped since ``_rows`` last read them
        self._rows: _Rows | None = None  # the batched verdict's per-row usage

    @property
    def storage(self) -> StorageState:
        return storage_of(self.handle, self._own)

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        if pod.volumes and any(counts_volume(v) for v in pod.volumes):  # (no generator for no volumes)
            state.write(STATE_KEY, _State())
            return None, None
        return None, PRE_FILTER_SKIP

    def _new_volumes(self, state: CycleState, storage: StorageState, pod: Pod,
                     csi_node: CSINode | None) -> dict[str, str]:
        """The pod's own volumes, computed once per cycle for each kind of CSINode they depend on (none, or
        one that does or does not list Portworx as migrated). Raises ``_LookupError``."""
        s = state.read(STATE_KEY) if self.handle is not None and self.handle.batched else None
        if s is None:  # no PreFilter state, or the reference path: computed on every node, as upstream
            out: dict[str, str] = {}
            self._attachable(storage, pod, csi_node, True, out)
            return out
        key = None if csi_node is None else _PORTWORX in csi_node.migrated_plugins()
        hit = s.new_volumes.get(key)
        if hit is None:
            try:
                out = {}
                self._attachable(storage, pod, csi_node, True, out)
                hit = out
            except _LookupError as e:
                hit = e
            s.new_volumes[key] = hit
        if isinstance(hit, _LookupError):
            raise hit
        return dict(hit)

    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        if not pod.volumes:
            return None
        storage = self.storage
        csi_node = storage.csi_nodes.get(node.name)
        try:
            new = self._new_volumes(state, storage, pod, csi_node)
        except _LookupError as e:
            return Status.unresolvable(str(e)) if e.unresolvable else Status.as_error(str(e))
        if not new:
            return None
        limits = volume_limits(csi_node)
        if not limits:
            return None
        if self.handle is not None and self.handle.batched:
            self._forget_changed(storage)
            usage = self._kept_usage(storage, node, csi_node)
        else:
            usage = self._usage(storage, node, csi_node, self._attachable_of, self._attachments)
        if isinstance(usage, _LookupError):
            return Status.as_error(str(usage))
        attached, counts = usage
        adding: dict[str, int] = {}
        for unique, driver in new.items():
            if unique not in attached:  # already on the node: not a new attachment
                adding[driver] = adding.get(driver, 0) + 1
        for driver, n in adding.items():
            limit = limits.get(driver)
            if limit is not None and counts.get(driver, 0) + n > limit:
                return Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT)
        return None

    # ------------------------------------------------------------------ batched verdict
    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        """``filter`` on every row: the pod's new volumes once per kind of CSINode, each driver's count of
        them against the rows' room; rows whose pods already attach one of them (not new there) go
        through ``filter`` itself. None when ``filter`` could return an Error for some row (a lookup of
        the pod's volumes or of a limited row's usage failed) or the rows are not the simulation's own."""
        handle = self.handle
        if handle is None or not handle.batched or state.read(STATE_KEY) is None:
            return None
        if not pod.volumes:
            return BatchVerdict(every_row_passes(cols), _no_statuses)
        storage = self.storage
        if cols.infos is not handle.snapshot.node_infos:
            return None
        rows = self._rows_of(cols, storage)
        if rows is None:
            return None
        bad: np.ndarray | None = None
        exact: set[int] = set()  # rows some of whose pods attach one of the new volumes
        for csi_node, of_kind in rows.kinds.values():
            try:
                new = self._new_volumes(state, storage, pod, csi_node)
            except _LookupError:
                return None  # an Error or the lookup's status on every row of this kind: the per-node path
            if not new:
                continue
            judged = of_kind & rows.limited
            if (judged & rows.error).any():
                return None
            adding: dict[str, int] = {}
            for unique, driver in new.items():
                adding[driver] = adding.get(driver, 0) + 1
                exact.update(r for r in rows.on_rows.get(unique, ()) if of_kind[r])
            for driver, n in adding.items():
                room = rows.room.get(driver)
                if room is not None:
                    over = judged & (room < n)
                    bad = over if bad is None else bad | over
        if exact:
            if bad is None:
                bad = np.zeros(cols.n, dtype=bool)
            infos = cols.infos
            for i in exact:
                st = self.filter(state, pod, infos[i])
                if st is not None and not st.is_rejected():  # (an Error: the per-node path reports it)
                    return None
                bad[i] = st is not None
        if bad is None or not bad.any():
            return BatchVerdict(every_row_passes(cols), _no_statuses)
        rejected = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT)  # (filter's one rejection)
        return BatchVerdict(~bad, lambda at: [rejected] * len(at))

    def _rows_of(self, cols: NodeColumns, storage: StorageState) -> _Rows | None:
        """The per-row usage of ``cols``, brought up to date; None when a limit does not fit the arrays."""
        self._forget_changed(storage)
        rows = self._rows
        todo: Iterable[int]
        if rows is None or rows.cols is not cols or rows.storage is not storage:
            rows = self._rows = _Rows(cols, storage)
            self._stale.clear()
            if not rows.usable:
                return None
            todo = np.flatnonzero(rows.limited).tolist()
        elif not rows.usable:
            return None
        else:
            log = cols.row_log
            if rows.pos == len(log) and not self._stale:
                return rows
            todo = set(log[rows.pos:])
            if self._stale:
                index = cols.index
                todo.update(index[name] for name in self._stale if name in index)
                self._stale.clear()
        rows.pos = len(cols.row_log)
        infos = cols.infos
        csi_nodes = storage.csi_nodes
        for i in todo:
            if rows.limits[i]:
                ni = infos[i]
                rows.read(i, self._kept_usage(storage, ni, csi_nodes.get(ni.name)))
        return rows

    def _usage(self, storage: StorageState, node: NodeInfo, csi_node: CSINode | None, volumes_of: Any,
               attachments_of: Any) -> tuple[dict[str, str], dict[str, int]] | _LookupError:
        """The node's attached volumes (``driver/handle`` -> driver, of the pods on it) and the count per driver
        of those and of its VolumeAttachments; the first pod's lookup error instead, as upstream."""
        attached: dict[str, str] = {}
        for existing in node.pods:
            if not existing.volumes:
                continue
            found = volumes_of(storage, existing, csi_node)
            if isinstance(found, _LookupError):
                return found
            attached.update(found)
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        for unique, driver in attachments_of(storage, node.name).items():
            if unique not in attached:
                counts[driver] = counts.get(driver, 0) + 1
        return attached, counts

    def _attachable_of(self, storage: StorageState, pod: Pod, csi_node: CSINode | None) -> dict[str, str] | _LookupError:
        out: dict[str, str] = {}
        try:
            self._attachable(storage, pod, csi_node, False, out)
        except _LookupError as e:
            return e
        return out

    # ------------------------------------------------------------------ kept results (batched path)
    def _kept_usage(self, storage: StorageState, node: NodeInfo,
                    csi_node: CSINode | None) -> tuple[dict[str, str], dict[str, int]] | _LookupError:
        """``_usage`` of a node of the simulation's own state, kept until a pod joins or leaves it (its
        generation) or a claim or volume it read changes; preemption's copies of nodes are not kept."""
        if self.handle is None or self.handle.snapshot.get(node.name) is not node:
            return self._usage(storage, node, csi_node, self._existing_volumes, self._kept_attachments)
        key = ("usage", node.name)
        hit = self._kept.get(key)
        if hit is not None and hit[0] is node and hit[1][0] == node.generation:  # type: ignore[index]
            return hit[1][1]  # type: ignore[index]
        value = self._usage(storage, node, csi_node, self._existing_volumes, self._kept_attachments)
        reads = self._attachment_reads(storage, node.name)
        for existing in node.pods:
            if existing.volumes:
                reads.extend(self._reads(storage, existing))
        self._remember(key, node, (node.generation, value), reads)
        return value

    def _forget_changed(self, storage: StorageState) -> None:
        """Drop the kept results that read a claim or volume changed since the last look (or everything, for
        another simulation's storage)."""
        whose, seen = self._seen
        if whose is not storage:
            self._kept.clear()
            self._readers.clear()
            seen = 0
        changes = storage.changes
        for change in changes[seen:]:
            for key in self._readers.pop(change, ()):
                self._kept.pop(key, None)
                if key[0] == "usage":  # type: ignore[index]
                    self._stale.add(key[1])  # type: ignore[index]
        self._seen = (storage, len(changes))

    def _remember(self, key: object, whose: object, value: object, reads: list[str]) -> None:
        self._kept[key] = (whose, value)
        for read in reads:
            self._readers.setdefault(read, []).append(key)

    def _existing_volumes(self, storage: StorageState, pod: Pod,
                          csi_node: CSINode | None) -> dict[str, str] | _LookupError:
        """``_attachable`` of a pod already on a node, kept per pod and kind of CSINode."""
        key = (id(pod), None if csi_node is None else _PORTWORX in csi_node.migrated_plugins())
        hit = self._kept.get(key)
        if hit is not None and hit[0] is pod:
            return hit[1]  # type: ignore[return-value]
        out: dict[str, str] = {}
        value: dict[str, str] | _LookupError = out
        try:
            self._attachable(storage, pod, csi_node, False, out)
        except _LookupError as e:
            value = e
        self._remember(key, pod, value, self._reads(storage, pod))
        return value

    @staticmethod
    def _reads(storage: StorageState, pod: Pod) -> list[str]:
        """The claims and volumes ``_attachable`` reads for the pod (as StorageState.changes names them)."""
        reads = []
        for v in pod.volumes:
            ref = claim_of_volume(pod.name, v)
            if ref is not None:
                reads.append(f"claim:{pod.namespace}/{ref[0]}")
                pvc = storage.claim(pod.namespace, ref[0])
                if pvc is not None and pvc.volume_name:
                    reads.append(f"volume:{pvc.volume_name}")
        return reads

    def _kept_attachments(self, storage: StorageState, node_name: str) -> dict[str, str]:
        key = ("attachments", node_name)
        hit = self._kept.get(key)
        if hit is not None:
            return hit[1]  # type: ignore[return-value]
        value = self._attachments(storage, node_name)
        self._remember(key, node_name, value, self._attachment_reads(storage, node_name))
        return value

    @staticmethod
    def _attachment_reads(storage: StorageState, node_name: str) -> list[str]:
        """The volumes ``_attachments`` reads for the node (as StorageState.changes names them)."""
        return [f"volume:{va.pv_name}" for va in storage.attachments_on(node_name) if va.pv_name is not None]

    # ------------------------------------------------------------------ helpers
    def _attachable(self, storage: StorageState, pod: Pod, csi_node: CSINode | None, new_pod: bool,
                    out: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: ``driver/handle`` -> driver for each volume of the pod."""
        for v in pod.volumes:
            ref = claim_of_volume(pod.name, v)
            if ref is None:
                self._inline(v, pod, csi_node, out)
                continue
            name, ephemeral = ref
            if not name:
                raise _LookupError("PersistentVolumeClaim had no name")
            pvc = storage.claim(pod.namespace, name)
            if pvc is None:
                if new_pod:
                    raise _LookupError(f'looking up PVC {pod.namespace}/{name}: persistentvolumeclaim "{name}" '
                                       f'not found', unresolvable=True)
                continue
            if ephemeral:
                err = ephemeral_owner_error(pod.namespace, pod.name, pod.uid, pvc)
                if err:
                    raise _LookupError(err)
            driver, handle = self._csi_driver_info(storage, csi_node, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver

    @staticmethod
    def _inline(volume: Mapping, pod: Pod, csi_node: CSINode | None, out: dict[str, str]) -> None:
        """Upstream ``checkAttachableInlineVolume``."""
        kind = in_tree_source(volume)
        if kind is None:
            return
        plugin = IN_TREE_PLUGIN_OF_SOURCE[kind]
        if not migration_on(csi_node, plugin):
            return
        try:
            driver, handle = inline_csi_volume(volume, pod.namespace)
        except TranslationError as e:
            raise _LookupError(f"converting volume({volume.get('name', '')}) from inline to csi: {e}") from None
        out[f"{driver}/{handle}"] = driver

    @staticmethod
    def _csi_driver_info(storage: StorageState, csi_node: CSINode | None,
                         pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfo``: from the claim's PV, else from its class."""
        if not pvc.volume_name:
            return NodeVolumeLimits._csi_driver_info_from_class(storage, csi_node, pvc)
        pv = storage.volume(pvc.volume_name)
        if pv is None:
            return NodeVolumeLimits._csi_driver_info_from_class(storage, csi_node, pvc)
        if pv.csi_driver:
            return pv.csi_driver, pv.csi_handle
        if not pv.in_tree:
            return "", ""
        plugin = IN_TREE_PLUGIN_OF_SOURCE[next(iter(pv.in_tree))]
        if not migration_on(csi_node, plugin):
            return "", ""
        try:
            csi = translate_pv(pv)
        except TranslationError:
            return "", ""
        return csi.csi_driver, csi.csi_handle

    @staticmethod
    def _csi_driver_info_from_class(storage: StorageState, csi_node: CSINode | None,
                                    pvc: PersistentVolumeClaim) -> tuple[str, str]:
        if not pvc.storage_class:
            return "", ""
        cls = storage.classes.get(pvc.storage_class)
        if cls is None:
            return "", ""
        handle = f"{VOLUME_ID_PREFIX}-{pvc.namespace}/{pvc.name}"
        provisioner = cls.provisioner
        if provisioner in CSI_DRIVER_OF_IN_TREE_PLUGIN:
            if not migration_on(csi_node, provisioner):
                return "", ""
            return CSI_DRIVER_OF_IN_TREE_PLUGIN[provisioner], handle
        return provisioner, handle

    @staticmethod
    def _attachments(storage: StorageState, node_name: str) -> dict[str, str]:
        """Upstream ``getNodeVolumeAttachmentInfo``: the CSI volumes attached to the node."""
        out: dict[str, str] = {}
        for va in storage.attachments_on(node_name):
            if not va.attacher or va.pv_name is None:
                continue
            pv = storage.volume(va.pv_name)
            if pv is None or not pv.csi_driver:
                continue
            out[f"{va.attacher}/{pv.csi_handle}"] = va.attacher
        return out


_no_statuses = no_statuses(NAME)


PLUGIN = NodeVolumeLimits


def factory(args: None, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits(handle)
