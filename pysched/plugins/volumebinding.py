"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node.

As upstream's ``volumebinding`` plugin and its volume binder (feature gates of v1.34: VolumeAttributesClass
on, StorageCapacityScoring off, so the plugin never scores):

* PreFilter: every claim must exist (not lost, not being deleted, an ephemeral volume's claim owned by the
  pod); claims are split into bound, unbound with delayed binding (WaitForFirstConsumer) and unbound
  immediate ones, which reject the pod (``pod has unbound immediate PersistentVolumeClaims``).
* Filter: the PV of each bound claim must accept the node (node affinity, after CSI translation of
  migrated in-tree volumes); each delayed claim needs an available PV on the node (the smallest that fits:
  size, access modes, class, selector, volume mode, node affinity), else dynamic provisioning (a
  provisioner, the class's allowedTopologies, CSIStorageCapacity when the CSI driver asks for it).
* Reserve assumes the choice (seen by this plugin only, as upstream's assume cache), Unreserve forgets it,
  PreBind applies it to the simulation's storage state as the PV controller and the provisioner would
  (``StorageState.bind_static`` / ``provision``) and records the decisions under ``TRACE_KEY``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pysched.framework.batch import BatchVerdict, every_row_passes, no_statuses
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
from pysched.framework.status import PRE_FILTER_SKIP, PRE_SCORE_SKIP, Code, Status
from pysched.model.objects import Node, Pod
from pysched.model.quantity import milli_to_value
from pysched.model.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    CLAIM_LOST,
    IN_TREE_PLUGIN_OF_SOURCE,
    NOT_SUPPORTED_PROVISIONER,
    VOLUME_AVAILABLE,
    ClaimRef,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    TranslationError,
    claim_of_volume,
    ephemeral_owner_error,
    topology_matches,
    translate_pv,
    volume_matches_node,
)
from pysched.plugins.helper import decode_plugin_args
from pysched.snapshot.cluster import Cluster, StorageState
from pysched.snapshot.nodeinfo import NodeInfo

if TYPE_CHECKING:
    from pysched.snapshot.columns import NodeColumns

NAME = "VolumeBinding"
STATE_KEY = NAME
TRACE_KEY = NAME + "/decisions"  # CycleState: what PreBind did with each claim (the trace's volume_binding)
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
# in-tree plugins whose PVs VolumeBinding translates to CSI when the node's CSINode lists them as migrated
_MIGRATION_ON = ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                 "kubernetes.io/cinder", "kubernetes.io/portworx-volume")


def decode_args(raw: Any) -> Any:
    return decode_plugin_args(NAME, raw)


class _Claims:
    """Upstream ``PodVolumeClaims``."""

    __slots__ = ("bound", "candidates", "delayed", "immediate")

    def __init__(self) -> None:
        self.bound: list[PersistentVolumeClaim] = []
        self.delayed: list[PersistentVolumeClaim] = []
        self.immediate: list[PersistentVolumeClaim] = []
        # per delayed claim: the volumes of its class that could match it on some node (upstream lists the
        # class's volumes here and checks each against the claim on every node)
        self.candidates: dict[str, Candidates] = {}


class PodVolumes:
    """Upstream ``PodVolumes`` for one node: static bindings (claim, PV) and claims to provision."""

    __slots__ = ("provisions", "static")

    def __init__(self, static: list[tuple[PersistentVolumeClaim, PersistentVolume]] | None = None,
                 provisions: list[PersistentVolumeClaim] | None = None) -> None:
        self.static = static or []
        self.provisions = provisions or []


class _State(StateData):
    """Shared by clones, as upstream's (its Clone returns itself)."""

    __slots__ = ("all_bound", "by_node", "claims", "has_pvcs", "has_static_bindings")

    def __init__(self, has_pvcs: bool = False, claims: _Claims | None = None) -> None:
        self.has_pvcs = has_pvcs
        self.all_bound = False
        self.has_static_bindings = False
        self.by_node: dict[str, PodVolumes] = {}
        self.claims = claims


class BinderError(Exception):
    """What upstream's volume binder returns as an error (the Filter status is then an Error)."""


def pod_has_pvcs(pod: Pod) -> bool:
    return any(v.get("persistentVolumeClaim") is not None or v.get("ephemeral") is not None for v in pod.volumes)


def _missing_state() -> Status:
    return Status.as_error("not found")


def storage_of(handle: Handle | None, own: list) -> StorageState:
    """The simulation's storage state; without a handle (unit tests of pods without claims) an empty one."""
    if handle is not None:
        return handle.snapshot.storage
    if not own:
        own.append(StorageState(Cluster()))
    return own[0]


def pv_for_node(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """``tryTranslatePVToCSI``: a migratable in-tree PV as its CSI volume when the node's CSINode lists the
    plugin as migrated; the PV itself otherwise. Raises ``BinderError``."""
    if not pv.in_tree or csi_node is None:
        return pv
    plugin = IN_TREE_PLUGIN_OF_SOURCE[next(iter(pv.in_tree))]
    if plugin not in _MIGRATION_ON or plugin not in csi_node.migrated_plugins():
        return pv
    try:
        return translate_pv(pv)
    except TranslationError as e:
        raise BinderError(f"could not translate pv: {e}") from None


def volume_candidates(claim: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> list[PersistentVolume]:
    """The volumes ``FindMatchingVolume`` may return for the claim on some node, in order: those passing
    every check that does not depend on the node (a volume pre-bound to the claim skips the availability,
    selector, class and access-mode checks, as upstream)."""
    requested = claim.request or 0
    out = []
    for pv in volumes:
        if pv.claim_ref is not None and not pv.bound_to(claim):
            continue
        if pv.capacity < requested or pv.volume_mode != claim.volume_mode:
            continue
        if pv.attributes_class != claim.attributes_class or pv.meta.deletion_timestamp is not None:
            continue
        if not pv.bound_to(claim):
            if pv.phase != VOLUME_AVAILABLE or pv.storage_class != claim.storage_class:
                continue
            if claim.selector is not None and not claim.selector.matches(pv.labels):
                continue
            if not set(claim.access_modes) <= set(pv.access_modes):
                continue
        out.append(pv)
    return out


class Candidates:
    """A claim's ``volume_candidates``, indexed by the node labels their node affinity requires, so that
    Filter looks at each node's own volumes only (a local volume per node would otherwise make every
    node check every volume). ``for_node`` keeps the list order, so the pick is unchanged; the reference
    path (``Handle.batched`` off) checks every candidate on every node, as upstream."""

    __slots__ = ("always", "by_label", "volumes")

    def __init__(self, claim: PersistentVolumeClaim, volumes: list[PersistentVolume]) -> None:
        self.volumes = volumes
        self.always: list[int] = []  # volumes to check on every node
        self.by_label: dict[str, dict[str, list[int]]] = {}  # label key -> value -> volumes that may match
        for i, pv in enumerate(volumes):
            # a volume pre-bound to the claim decides even where it does not fit: always checked
            pivots = None if pv.bound_to(claim) else _pivots(pv)
            if pivots is None:
                self.always.append(i)
                continue
            for key, values in pivots:
                by_value = self.by_label.setdefault(key, {})
                for v in values:
                    by_value.setdefault(v, []).append(i)

    def for_node(self, labels: dict[str, str]) -> list[PersistentVolume]:
        if not self.by_label:
            return self.volumes
        hits = set(self.always)
        for key, by_value in self.by_label.items():
            v = labels.get(key)
            if v is not None:
                hits.update(by_value.get(v, ()))
        return [self.volumes[i] for i in sorted(hits)]


def _pivots(pv: PersistentVolume) -> list[tuple[str, frozenset[str]]] | None:
    """One ``In`` requirement of each term of the volume's node affinity (a node must satisfy one of them to
    match), or None when some term has none (the volume is checked on every node). Invalid terms match
    nothing and give no pivot."""
    sel = pv.node_affinity
    if sel is None:
        return None
    out = []
    for t in sel.terms:
        if not t.valid:
            continue
        pivot = next((r for r in t.expressions if r.op == "In"), None)
        if pivot is None:
            return None
        out.append((pivot.key, pivot.values))
    return out


def pick_volume(claim: PersistentVolumeClaim, candidates: list[PersistentVolume], labels: dict[str, str],
                excluded: set[str]) -> PersistentVolume | None:
    """``FindMatchingVolume`` on the scheduler's path, over ``volume_candidates``: a volume pre-bound to the
    claim decides alone (itself if it accepts the node, else nothing); otherwise the smallest volume that
    accepts the node, the first of equal size."""
    smallest: PersistentVolume | None = None
    for pv in candidates:
        if pv.name in excluded:
            continue
        fits_node = volume_matches_node(pv, labels)
        if pv.bound_to(claim):
            return pv if fits_node else None
        if fits_node and (smallest is None or smallest.capacity > pv.capacity):
            smallest = pv
    return smallest


def find_matching_volume(claim: PersistentVolumeClaim, volumes: list[PersistentVolume], labels: dict[str, str],
                         excluded: set[str]) -> PersistentVolume | None:
    """Upstream ``FindMatchingVolume`` for the scheduler (a node given, delayed binding)."""
    return pick_volume(claim, volume_candidates(claim, volumes), labels, excluded)


class VolumeBinding(PreFilterPlugin, FilterPlugin, ReservePlugin, PreBindPlugin, PreScorePlugin, ScorePlugin):
    NAME = NAME

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else decode_args(None)
        self.handle = handle
        self._own: list[StorageState] = []

    @property
    def storage(self) -> StorageState:
        return storage_of(self.handle, self._own)

    # ------------------------------------------------------------------ PreFilter
    def _claims_problem(self, pod: Pod) -> tuple[bool, str | None]:
        """Upstream ``podHasPVCs``: whether the pod has claims, and why they cannot be used."""
        has = False
        storage = self.storage
        for v in pod.volumes:
            ref = claim_of_volume(pod.name, v)
            if ref is None:
                continue
            has = True
            name, ephemeral = ref
            pvc = storage.claim(pod.namespace, name)
            if pvc is None:
                if ephemeral:
                    return has, f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                return has, f'persistentvolumeclaim "{name}" not found'
            if pvc.phase == CLAIM_LOST:
                return has, f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            if pvc.meta.deletion_timestamp is not None:
                return has, f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral:
                err = ephemeral_owner_error(pod.namespace, pod.name, pod.uid, pvc)
                if err:
                    return has, err
        return has, None

    def _volume_bound(self, pod: Pod, volume: dict) -> tuple[bool, PersistentVolumeClaim | None, str | None]:
        """Upstream ``isVolumeBound`` against the assumed claims."""
        ref = claim_of_volume(pod.name, volume)
        if ref is None:
            return True, None, None
        name, ephemeral = ref
        pvc = self.storage.claim(pod.namespace, name, assumed=True)
        if pvc is None:
            return False, None, f'error getting PVC "{pod.namespace}/{name}": not found'
        if ephemeral:
            err = ephemeral_owner_error(pod.namespace, pod.name, pod.uid, pvc)
            if err:
                return False, None, err
        return pvc.fully_bound(), pvc, None

    def _pod_volume_claims(self, pod: Pod) -> tuple[_Claims, str | None]:
        """Upstream ``GetPodVolumeClaims``."""
        claims = _Claims()
        storage = self.storage
        for v in pod.volumes:
            bound, pvc, err = self._volume_bound(pod, v)
            if err is not None:
                return claims, err
            if pvc is None:
                continue
            if bound:
                claims.bound.append(pvc)
                continue
            cls = storage.classes.get(pvc.storage_class) if pvc.storage_class else None
            if cls is not None and cls.wait_for_first_consumer and not pvc.volume_name:
                claims.delayed.append(pvc)
            else:
                claims.immediate.append(pvc)
        by_class: dict[str, list[PersistentVolume]] = {}
        for pvc in claims.delayed:
            volumes = by_class.get(pvc.storage_class)
            if volumes is None:
                volumes = by_class[pvc.storage_class] = storage.volumes_of_class(pvc.storage_class)
            claims.candidates[pvc.key] = Candidates(pvc, volume_candidates(pvc, volumes))
        return claims, None

    def pre_filter(self, state: CycleState, pod: Pod,
                   nodes: list[NodeInfo]) -> tuple[PreFilterResult | None, Status | None]:
        has, problem = self._claims_problem(pod) if pod.volumes else (False, None)
        if problem is not None:
            return None, Status.unresolvable(problem)
        if not has:
            state.write(STATE_KEY, _State())
            return None, PRE_FILTER_SKIP
        claims, err = self._pod_volume_claims(pod)
        if err is not None:
            return None, Status.as_error(err)
        if claims.immediate:
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(has_pvcs=True, claims=claims))
        return None, None

    # ------------------------------------------------------------------ Filter
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if s.claims is None:  # no claims (Filter is not called after PreFilter's Skip)
            s.by_node[node.name] = PodVolumes()
            return None
        try:
            volumes, reasons = self.find_pod_volumes(s.claims, node.node)
        except BinderError as e:
            return Status.as_error(str(e))
        if reasons:
            return Status.unresolvable(*reasons)
        s.by_node[node.name] = volumes
        s.has_static_bindings = s.has_static_bindings or bool(volumes.static)
        return None

    def batch_filter(self, state: CycleState, pod: Pod, cols: NodeColumns) -> BatchVerdict | None:
        """Filter's verdict on every row when it provably does not depend on the node: every claim bound
        (nothing to match or provision) to a CSI or other non-migratable volume without node affinity, or
        one of them bound to a missing volume (every node rejected alike). None otherwise, and whenever
        ``filter`` could return an Error. ``filter`` would record an empty ``PodVolumes`` per node; with
        only bound claims Reserve then finds every volume bound and never reads it."""
        s = state.read(STATE_KEY)
        if s is None or s.claims is None:
            return None
        claims = s.claims
        if claims.delayed or claims.immediate:
            return None
        storage = self.storage
        for pvc in claims.bound:  # in filter's order: the first missing volume decides before later ones
            pv = storage.volume(pvc.volume_name, assumed=True)
            if pv is None:
                return _every_row_rejected(cols, Status.unresolvable(ERR_REASON_PV_NOT_EXIST))
            if pv.in_tree or pv.node_affinity is not None:
                return None  # (translation per CSINode, or node labels: the per-node path decides)
        return BatchVerdict(every_row_passes(cols), _no_statuses)

    def find_pod_volumes(self, claims: _Claims, node: Node) -> tuple[PodVolumes, list[str]]:
        """Upstream ``FindPodVolumes``: the volumes for the node, or the reasons it cannot have them.
        Raises ``BinderError`` where upstream returns an error."""
        storage = self.storage
        bound_ok = unbound_ok = enough_space = pvs_found = True
        out = PodVolumes()
        labels = node.labels

        def reasons() -> list[str]:
            r = []
            if not bound_ok:
                r.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                r.append(ERR_REASON_BIND_CONFLICT)
            if not enough_space:
                r.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not pvs_found:
                r.append(ERR_REASON_PV_NOT_EXIST)
            return r

        if claims.bound:
            csi_node = storage.csi_nodes.get(node.name)
            for pvc in claims.bound:
                pv = storage.volume(pvc.volume_name, assumed=True)
                if pv is None:
                    pvs_found = False
                    break
                if not volume_matches_node(pv_for_node(pv, csi_node), labels):
                    bound_ok = False
                    break
        if claims.delayed:
            to_match: list[PersistentVolumeClaim] = []
            to_provision: list[PersistentVolumeClaim] = []
            for pvc in claims.delayed:
                if ANN_SELECTED_NODE in pvc.annotations:
                    if pvc.annotations[ANN_SELECTED_NODE] != node.name:
                        unbound_ok = False  # provisioning is under way for another node
                        return out, reasons()
                    to_provision.append(pvc)
                else:
                    to_match.append(pvc)
            if to_match:
                indexed = self.handle is not None and self.handle.batched  # no handle: the reference path, as IPA/PTS
                unbound_ok, out.static, unmatched = self._find_matching_volumes(claims, to_match, labels, indexed)
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, enough_space, out.provisions = self._check_provisions(to_provision, node)
        return out, reasons()

    @staticmethod
    def _find_matching_volumes(claims: _Claims, to_match: list[PersistentVolumeClaim], labels: dict[str, str],
                               indexed: bool) -> tuple[bool, list[tuple[PersistentVolumeClaim, PersistentVolume]],
                                                       list[PersistentVolumeClaim]]:
        chosen: set[str] = set()
        found = True
        bindings: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
        unmatched: list[PersistentVolumeClaim] = []
        # the smallest requests first (upstream sorts by request; insertion sort keeps ties in order)
        for pvc in sorted(to_match, key=lambda c: c.request or 0):
            cands = claims.candidates.get(pvc.key)
            volumes = [] if cands is None else cands.for_node(labels) if indexed else cands.volumes
            pv = pick_volume(pvc, volumes, labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                found = False
                continue
            chosen.add(pv.name)
            bindings.append((pvc, pv))
        return found, bindings, unmatched

    def _check_provisions(self, to_provision: list[PersistentVolumeClaim],
                          node: Node) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
        """Upstream ``checkVolumeProvisions``: (provisioning possible, enough storage, claims to provision)."""
        storage = self.storage
        out = []
        for pvc in to_provision:
            if not pvc.storage_class:
                raise BinderError(f'no class for claim "{pvc.key}"')
            cls = storage.classes.get(pvc.storage_class)
            if cls is None:
                raise BinderError(f'failed to find storage class "{pvc.storage_class}"')
            if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not topology_matches(cls.allowed_topologies, node.labels):
                return False, True, []
            if not self._has_enough_capacity(cls.provisioner, pvc, node):
                return True, False, []
            out.append(pvc)
        return True, True, out

    def _has_enough_capacity(self, provisioner: str, pvc: PersistentVolumeClaim, node: Node) -> bool:
        """Upstream ``hasEnoughCapacity``: only for CSI drivers that opt into storage capacity tracking."""
        if pvc.request is None:
            return True
        storage = self.storage
        driver = storage.csi_drivers.get(provisioner)
        if driver is None or not driver.storage_capacity:
            return True
        size = milli_to_value(pvc.request)
        for cap in storage.capacities:
            limit = cap.volume_limit()
            if cap.storage_class != pvc.storage_class or limit is None or milli_to_value(limit) < size:
                continue
            if cap.node_topology is not None and cap.node_topology.matches(node.labels):
                return True
        return False

    # ------------------------------------------------------------------ Score (StorageCapacityScoring off)
    PRE_SCORE_ROWS = True  # (a RowNodes is welcome: pre_score reads no node)

    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        return PRE_SCORE_SKIP  # no scorer without the StorageCapacityScoring gate (the shared Skip: only its code is read)

    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status | None]:
        return 0, None

    # ------------------------------------------------------------------ Reserve / Unreserve
    def _all_bound(self, pod: Pod) -> bool:
        """Upstream ``arePodVolumesBound`` against the assumed claims."""
        for v in pod.volumes:
            bound, _, _ = self._volume_bound(pod, v)
            if not bound:
                return False
        return True

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        volumes = s.by_node.get(node_name)
        if volumes is None or self._all_bound(pod):
            s.all_bound = True
            return None
        storage = self.storage
        static = []
        for pvc, pv in volumes.static:
            assumed = pv.copy()
            dirty = False
            ref = pv.claim_ref
            if ref is None or (ref.name, ref.namespace, ref.uid) != (pvc.name, pvc.namespace, pvc.uid):
                assumed.claim_ref = ClaimRef(pvc.namespace, pvc.name, pvc.uid)
                dirty = True
            if not pv.bound_to(pvc) and ANN_BOUND_BY_CONTROLLER not in assumed.annotations:
                assumed.annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
                dirty = True
            if dirty:
                storage.assume_volume(assumed)
            static.append((pvc, assumed))
        provisions = []
        for pvc in volumes.provisions:
            assumed_claim = pvc.copy()
            assumed_claim.annotations[ANN_SELECTED_NODE] = node_name
            storage.assume_claim(assumed_claim)
            provisions.append(assumed_claim)
        volumes.static, volumes.provisions = static, provisions
        s.all_bound = False
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = state.read(STATE_KEY)
        volumes = s.by_node.get(node_name) if s is not None else None
        if volumes is None:
            return
        storage = self.storage
        for _, pv in volumes.static:
            storage.restore_volume(pv.name)
        for pvc in volumes.provisions:
            storage.restore_claim(pvc.key)

    # ------------------------------------------------------------------ PreBind
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if s.all_bound:
            return Status(Code.Skip)
        if node_name not in s.by_node:
            return Status.as_error(f'no pod volume found for node "{node_name}"')
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.read(STATE_KEY)
        if s is None:
            return _missing_state()
        if s.claims is None and s.all_bound and not s.has_pvcs:
            return None  # (most pods: no claim, nothing to bind, no trace to write)
        decisions: dict[str, dict[str, str]] = {}
        for pvc in s.claims.bound if s.claims is not None else ():
            decisions[pvc.key] = {"pvc": pvc.key, "decision": "bound", "pv": pvc.volume_name}
        if not s.all_bound:
            volumes = s.by_node.get(node_name)
            if volumes is None:
                return Status.as_error(f'no pod volume found for node "{node_name}"')
            storage = self.storage
            for pvc, pv in volumes.static:
                storage.bind_static(pvc, pv)
                decisions[pvc.key] = {"pvc": pvc.key, "decision": "static", "pv": pv.name}
            ni = self.handle.snapshot.get(node_name) if self.handle is not None else None
            node = ni.node if ni is not None else None
            for pvc in volumes.provisions:
                created = storage.provision(pvc, node if node is not None else _bare_node(node_name))
                decisions[pvc.key] = {"pvc": pvc.key, "decision": "provision", "pv": created.name, "node": node_name}
        if s.has_pvcs:
            state.write(TRACE_KEY, self._in_volume_order(pod, decisions))
        return None

    @staticmethod
    def _in_volume_order(pod: Pod, decisions: dict[str, dict[str, str]]) -> list[dict[str, str]]:
        out = []
        seen = set()
        for v in pod.volumes:
            ref = claim_of_volume(pod.name, v)
            key = f"{pod.namespace}/{ref[0]}" if ref is not None else None
            if key is not None and key in decisions and key not in seen:
                seen.add(key)
                out.append(decisions[key])
        return out


_no_statuses = no_statuses(NAME)


def _every_row_rejected(cols: NodeColumns, status: Status) -> BatchVerdict:
    """A verdict rejecting every row with one shared ``status``."""
    ok = np.zeros(cols.n, dtype=bool)
    ok.flags.writeable = False
    return BatchVerdict(ok, lambda rows: [status] * len(rows))


def _bare_node(name: str) -> Node:
    from pysched.model.objects import parse_node
    return parse_node({"metadata": {"name": name}})


PLUGIN = VolumeBinding


def factory(args: Any, handle: Handle) -> VolumeBinding:
    return VolumeBinding(args, handle)

