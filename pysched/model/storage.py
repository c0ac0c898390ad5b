"""Storage objects the volume plugins read: PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode,
CSIDriver, VolumeAttachment and CSIStorageCapacity, parsed from plain dicts.

Parsing raises ``FieldError`` with the field path; loaders add the file and object. Quantities are kept in
milli-units (``Quantity.Cmp`` compares them exactly). Claims and volumes are mutable: the simulation binds
them, on copies (``copy()``), so that a loaded cluster can be simulated again.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import field, fields

from pysched.errors import QuantityError, SelectorError
from pysched.lazyclass import dataclass
from pysched.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    Requirement,
    label_key_error,
    label_value_error,
)
from pysched.model.objects import (
    FieldError,
    ObjectMeta,
    _int,
    _list,
    _map,
    _selector,
    _show,
    _str,
    _str_list,
)
from pysched.model.quantity import to_milli

# annotations and values of the API (k8s.io/api, component-helpers/storage/volume)
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
IMMEDIATE = "Immediate"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
CLAIM_LOST = "Lost"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
CLAIM_BOUND = "Bound"
FILESYSTEM = "Filesystem"
ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", READ_WRITE_ONCE_POD)
# PersistentVolume sources the CSI translation library migrates (in-tree plugin -> CSI driver)
# Volume sources the CSI translation library migrates, with their in-tree plugin names, and the CSI driver
# of each in-tree plugin (k8s.io/csi-translation-lib/plugins).
IN_TREE_PLUGIN_OF_SOURCE = {
    "gcePersistentDisk": "kubernetes.io/gce-pd",
    "awsElasticBlockStore": "kubernetes.io/aws-ebs",
    "cinder": "kubernetes.io/cinder",
    "azureDisk": "kubernetes.io/azure-disk",
    "azureFile": "kubernetes.io/azure-file",
    "vsphereVolume": "kubernetes.io/vsphere-volume",
    "portworxVolume": "kubernetes.io/portworx-volume",
}
CSI_DRIVER_OF_IN_TREE_PLUGIN = {
    "kubernetes.io/gce-pd": "pd.csi.storage.gke.io",
    "kubernetes.io/aws-ebs": "ebs.csi.aws.com",
    "kubernetes.io/cinder": "cinder.csi.openstack.org",
    "kubernetes.io/azure-disk": "disk.csi.azure.com",
    "kubernetes.io/azure-file": "file.csi.azure.com",
    "kubernetes.io/vsphere-volume": "csi.vsphere.vmware.com",
    "kubernetes.io/portworx-volume": "pxd.portworx.com",
}
IN_TREE_PV_SOURCES = tuple(IN_TREE_PLUGIN_OF_SOURCE)


def _storage_quantity(raw: Mapping, path: str) -> int | None:
    """``<map>.storage`` of a resource list in milli-units, None when absent."""
    if "storage" not in raw or raw.get("storage") is None:
        return None
    try:
        milli = to_milli(raw["storage"])
    except QuantityError as e:
        raise FieldError(f"{path}.storage", str(e)) from None
    if milli < 0:
        raise FieldError(f"{path}.storage", f"must be greater than or equal to 0, got {raw['storage']!r}")
    return milli


def _access_modes(raw: Mapping, key: str, path: str) -> tuple[str, ...]:
    modes = _str_list(raw, key, path)
    for i, m in enumerate(modes):
        if m not in ACCESS_MODES:
            raise FieldError(f"{path}.{key}[{i}]", f"unsupported value {m!r}: supported values: "
                             + ", ".join(f'"{a}"' for a in ACCESS_MODES))
    return tuple(modes)


def _class_of(meta: ObjectMeta, spec_class: str | None) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation wins over the field."""
    if ANN_BETA_STORAGE_CLASS in meta.annotations:
        return str(meta.annotations[ANN_BETA_STORAGE_CLASS])
    return spec_class or ""


# --------------------------------------------------------------------------- claims

@dataclass(slots=True)
class PersistentVolumeClaim:
    meta: ObjectMeta
    access_modes: tuple[str, ...]
    storage_class: str  # "" when none was requested
    request: int | None  # spec.resources.requests.storage in milli-units (None: absent)
    volume_name: str
    selector: LabelSelector | None  # None: no selector
    volume_mode: str
    attributes_class: str
    phase: str
    annotations: dict[str, str] = field(default_factory=dict)  # own copy: binding writes to it

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def namespace(self) -> str:
        return self.meta.namespace

    @property
    def key(self) -> str:
        return f"{self.meta.namespace}/{self.meta.name}"

    @property
    def uid(self) -> str:
        return self.meta.uid

    def copy(self) -> PersistentVolumeClaim:
        """A copy whose annotations may change; as ``dataclasses.replace`` makes it (every field an init
        field, no ``__post_init__``), several times cheaper: the volume cases copy thousands per simulation."""
        new = PersistentVolumeClaim(*_PVC_FIELDS(self))
        new.annotations = dict(self.annotations)
        return new

    def fully_bound(self) -> bool:
        """``isPVCFullyBound``: a volume name and the bind-completed annotation."""
        return bool(self.volume_name) and ANN_BIND_COMPLETED in self.annotations

    def controlled_by(self, uid: str) -> bool:
        ref = self.meta.controller_ref()
        return ref is not None and ref.get("uid") == uid


_PVC_FIELDS = operator.attrgetter(*(f.name for f in fields(PersistentVolumeClaim)))


def parse_pvc(raw: Mapping) -> PersistentVolumeClaim:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata")
    spec = _map(raw, "spec", "")
    status = _map(raw, "status", "")
    resources = _map(spec, "resources", "spec")
    requests = _map(resources, "requests", "spec.resources")
    sel_raw = spec.get("selector")
    sc = spec.get("storageClassName")
    if sc is not None and not isinstance(sc, str):
        raise FieldError("spec.storageClassName", f"expected a string, got {_show(sc)}")
    return PersistentVolumeClaim(
        meta=meta,
        access_modes=_access_modes(spec, "accessModes", "spec"),
        storage_class=_class_of(meta, sc),
        request=_storage_quantity(requests, "spec.resources.requests"),
        volume_name=_str(spec, "volumeName", "spec"),
        selector=_selector(sel_raw, "spec.selector") if sel_raw is not None else None,
        volume_mode=_str(spec, "volumeMode", "spec") or FILESYSTEM,
        attributes_class=_str(spec, "volumeAttributesClassName", "spec"),
        phase=_str(status, "phase", "status") or "Pending",
        annotations={str(k): str(v) for k, v in meta.annotations.items()},
    )


# --------------------------------------------------------------------------- volumes

@dataclass(slots=True, frozen=True)
class ClaimRef:
    namespace: str
    name: str
    uid: str


@dataclass(slots=True)
class PersistentVolume:
    meta: ObjectMeta
    capacity: int  # spec.capacity.storage in milli-units (0 when absent)
    access_modes: tuple[str, ...]
    storage_class: str
    volume_mode: str
    attributes_class: str
    claim_ref: ClaimRef | None
    node_affinity: NodeSelector | None  # spec.nodeAffinity.required (None: no constraint)
    phase: str
    csi_driver: str  # spec.csi.driver ("" when the PV is no CSI volume)
    csi_handle: str
    in_tree: dict[str, Mapping] = field(default_factory=dict)  # migratable in-tree source kind -> its fields
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.meta.name

    @property
    def labels(self) -> dict[str, str]:
        return self.meta.labels

    def copy(self) -> PersistentVolume:
        """A copy whose annotations may change (see PersistentVolumeClaim.copy)."""
        new = PersistentVolume(*_PV_FIELDS(self))
        new.annotations = dict(self.annotations)
        return new

    def bound_to(self, claim: PersistentVolumeClaim) -> bool:
        """``IsVolumeBoundToClaim``: the claim reference names the claim (and its UID, when it has one)."""
        ref = self.claim_ref
        if ref is None or ref.name != claim.name or ref.namespace != claim.namespace:
            return False
        return not ref.uid or ref.uid == claim.uid


_PV_FIELDS = operator.attrgetter(*(f.name for f in fields(PersistentVolume)))


def parse_pv(raw: Mapping) -> PersistentVolume:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    status = _map(raw, "status", "")
    capacity = _storage_quantity(_map(spec, "capacity", "spec"), "spec.capacity")
    ref_raw = spec.get("claimRef")
    claim_ref = None
    if ref_raw is not None:
        ref = _map(spec, "claimRef", "spec")
        claim_ref = ClaimRef(_str(ref, "namespace", "spec.claimRef"), _str(ref, "name", "spec.claimRef"),
                             _str(ref, "uid", "spec.claimRef"))
    affinity = None
    na = _map(spec, "nodeAffinity", "spec")
    if na.get("required") is not None:
        req = _map(na, "required", "spec.nodeAffinity")
        terms = req.get("nodeSelectorTerms")
        if terms is not None and not isinstance(terms, list):
            raise FieldError("spec.nodeAffinity.required.nodeSelectorTerms", f"expected a list, got {_show(terms)}")
        affinity = NodeSelector.parse(req)
    csi = _map(spec, "csi", "spec")
    in_tree = {k: spec[k] for k in IN_TREE_PV_SOURCES if isinstance(spec.get(k), Mapping)}
    sc = spec.get("storageClassName")
    if sc is not None and not isinstance(sc, str):
        raise FieldError("spec.storageClassName", f"expected a string, got {_show(sc)}")
    return PersistentVolume(
        meta=meta,
        capacity=capacity or 0,
        access_modes=_access_modes(spec, "accessModes", "spec"),
        storage_class=_class_of(meta, sc),
        volume_mode=_str(spec, "volumeMode", "spec") or FILESYSTEM,
        attributes_class=_str(spec, "volumeAttributesClassName", "spec"),
        claim_ref=claim_ref,
        node_affinity=affinity,
        phase=_str(status, "phase", "status") or "Pending",
        csi_driver=_str(csi, "driver", "spec.csi"),
        csi_handle=_str(csi, "volumeHandle", "spec.csi"),
        in_tree=in_tree,
        annotations={str(k): str(v) for k, v in meta.annotations.items()},
    )


# --------------------------------------------------------------------------- classes and CSI

@dataclass(slots=True, frozen=True)
class TopologyTerm:
    """A ``TopologySelectorTerm``: every (key, values) must hold (label In values)."""

    expressions: tuple[tuple[str, frozenset[str]], ...]


@dataclass(slots=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str  # API defaulting: Immediate
    allowed_topologies: tuple[TopologyTerm, ...]

    @property
    def wait_for_first_consumer(self) -> bool:
        return self.binding_mode == WAIT_FOR_FIRST_CONSUMER


def parse_storage_class(raw: Mapping) -> StorageClass:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    mode = _str(raw, "volumeBindingMode", "") or IMMEDIATE
    if mode not in (IMMEDIATE, WAIT_FOR_FIRST_CONSUMER):
        raise FieldError("volumeBindingMode", f'unsupported value {mode!r}: supported values: "{IMMEDIATE}", '
                         f'"{WAIT_FOR_FIRST_CONSUMER}"')
    terms = []
    for i, t in enumerate(_list(raw, "allowedTopologies", "")):
        path = f"allowedTopologies[{i}]"
        if not isinstance(t, Mapping):
            raise FieldError(path, f"expected an object, got {_show(t)}")
        exprs = []
        for j, e in enumerate(_list(t, "matchLabelExpressions", path)):
            ep = f"{path}.matchLabelExpressions[{j}]"
            if not isinstance(e, Mapping):
                raise FieldError(ep, f"expected an object, got {_show(e)}")
            exprs.append((_str(e, "key", ep), frozenset(_str_list(e, "values", ep))))
        terms.append(TopologyTerm(tuple(exprs)))
    return StorageClass(meta.name, _str(raw, "provisioner", ""), mode, tuple(terms))


@dataclass(slots=True, frozen=True)
class CSINodeDriver:
    name: str
    node_id: str
    topology_keys: tuple[str, ...]
    allocatable: int | None  # allocatable.count (None: no limit reported)


@dataclass(slots=True)
class CSINode:
    name: str
    annotations: dict[str, str]
    drivers: tuple[CSINodeDriver, ...]

    def driver(self, name: str) -> CSINodeDriver | None:
        for d in self.drivers:
            if d.name == name:
                return d
        return None

    def migrated_plugins(self) -> set[str]:
        """The in-tree plugins listed in the migrated-plugins annotation."""
        value = self.annotations.get(ANN_MIGRATED_PLUGINS, "")
        return set(value.split(",")) if value else set()


def parse_csi_node(raw: Mapping) -> CSINode:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    drivers = []
    for i, d in enumerate(_list(spec, "drivers", "spec")):
        path = f"spec.drivers[{i}]"
        if not isinstance(d, Mapping):
            raise FieldError(path, f"expected an object, got {_show(d)}")
        name = _str(d, "name", path)
        if not name:
            raise FieldError(f"{path}.name", "required: a non-empty string")
        alloc = _map(d, "allocatable", path)
        count = _int(alloc, "count", f"{path}.allocatable", None)
        if count is not None and count < 0:
            raise FieldError(f"{path}.allocatable.count", f"must be greater than or equal to 0, got {count}")
        drivers.append(CSINodeDriver(name, _str(d, "nodeID", path), tuple(_str_list(d, "topologyKeys", path)), count))
    return CSINode(meta.name, {str(k): str(v) for k, v in meta.annotations.items()}, tuple(drivers))


@dataclass(slots=True)
class CSIDriver:
    name: str
    attach_required: bool
    storage_capacity: bool


def parse_csi_driver(raw: Mapping) -> CSIDriver:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    for key in ("attachRequired", "storageCapacity"):
        v = spec.get(key)
        if v is not None and not isinstance(v, bool):
            raise FieldError(f"spec.{key}", f"expected true or false, got {_show(v)}")
    attach = spec.get("attachRequired")
    return CSIDriver(meta.name, True if attach is None else attach, spec.get("storageCapacity") is True)


@dataclass(slots=True)
class VolumeAttachment:
    name: str
    attacher: str
    node_name: str
    pv_name: str | None  # spec.source.persistentVolumeName (None: an inline volume)


def parse_volume_attachment(raw: Mapping) -> VolumeAttachment:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata", namespaced=False)
    spec = _map(raw, "spec", "")
    source = _map(spec, "source", "spec")
    pv = source.get("persistentVolumeName")
    if pv is not None and not isinstance(pv, str):
        raise FieldError("spec.source.persistentVolumeName", f"expected a string, got {_show(pv)}")
    return VolumeAttachment(meta.name, _str(spec, "attacher", "spec"), _str(spec, "nodeName", "spec"), pv)


@dataclass(slots=True)
class CSIStorageCapacity:
    name: str
    namespace: str
    storage_class: str
    node_topology: LabelSelector | None  # None: available nowhere
    capacity: int | None  # milli-units
    maximum_volume_size: int | None

    def volume_limit(self) -> int | None:
        """``volumeLimit``: maximumVolumeSize when set (it is more precise), else capacity."""
        return self.maximum_volume_size if self.maximum_volume_size is not None else self.capacity


def parse_csi_storage_capacity(raw: Mapping) -> CSIStorageCapacity:
    meta = ObjectMeta.parse(raw.get("metadata"), "metadata")
    topo = raw.get("nodeTopology")
    sizes: dict[str, int | None] = {}
    for key in ("capacity", "maximumVolumeSize"):
        v = raw.get(key)
        if v is None:
            sizes[key] = None
            continue
        try:
            sizes[key] = to_milli(v)
        except QuantityError as e:
            raise FieldError(key, str(e)) from None
    try:
        selector = LabelSelector.parse(topo, "nodeTopology") if topo is not None else None
    except SelectorError as e:
        raise FieldError(getattr(e, "path", "nodeTopology"), getattr(e, "detail", str(e))) from None
    return CSIStorageCapacity(meta.name, meta.namespace, _str(raw, "storageClassName", ""), selector,
                              sizes["capacity"], sizes["maximumVolumeSize"])


# --------------------------------------------------------------------------- CSI migration (csi-translation-lib)

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"
MULTI_ZONE_DELIMITER = "__"
UNSPECIFIED = "UNSPECIFIED"
# the CSI topology key each in-tree plugin's zones are translated to (plugins without one keep theirs)
_CSI_ZONE_KEY = {"kubernetes.io/aws-ebs": "topology.ebs.csi.aws.com/zone",
                 "kubernetes.io/gce-pd": "topology.gke.io/zone",
                 "kubernetes.io/cinder": "topology.cinder.csi.openstack.org/zone"}


class TranslationError(ValueError):
    """An in-tree volume the translation library cannot express as a CSI volume (its message is upstream's)."""


def in_tree_source(volume: Mapping) -> str | None:
    """The migratable in-tree source kind of a pod volume or PV spec (``IsInlineMigratable``), or None."""
    for kind in IN_TREE_PV_SOURCES:
        if isinstance(volume.get(kind), Mapping):
            return kind
    return None


def _ebs_volume_id(kubernetes_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-...`` -> ``vol-...``."""
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    rest = kubernetes_id[len("aws://"):]
    path = rest[rest.find("/"):] if "/" in rest else ""
    aws_id = path.strip("/")
    if not aws_id.startswith("vol-") or "/" in aws_id:
        raise TranslationError(f"failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume "
                               f"({kubernetes_id})")
    return aws_id


def _azure_disk_handle(src: Mapping) -> str:
    kind = src.get("kind") or "Shared"  # API defaulting: Shared
    if str(kind).lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
    return str(src.get("diskURI") or "")



def _azure_file_account(secret: str) -> str:
    """The storage account named by an azureFile secret ``azure-storage-account-<account>-secret``."""
    prefix, suffix = "azure-storage-account-", "-secret"
    if secret.startswith(prefix) and secret.endswith(suffix) and len(secret) > len(prefix) + len(suffix):
        return secret[len(prefix):-len(suffix)]
    return secret

def inline_csi_volume(volume: Mapping, namespace: str) -> tuple[str, str]:
    """(CSI driver, volume handle) of a migratable inline pod volume (``TranslateInTreeInlineVolumeToCSI``)."""
    kind = in_tree_source(volume)
    if kind is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {volume.get('name', '')!r}")
    src = volume[kind]
    driver = CSI_DRIVER_OF_IN_TREE_PLUGIN[IN_TREE_PLUGIN_OF_SOURCE[kind]]
    if kind == "gcePersistentDisk":
        handle = f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{src.get('pdName') or ''}"
    elif kind == "awsElasticBlockStore":
        handle = _ebs_volume_id(str(src.get("volumeID") or ""))
    elif kind == "azureDisk":
        handle = _azure_disk_handle(src)
    elif kind == "azureFile":
        account = _azure_file_account(str(src.get("secretName") or ""))
        handle = f"#{account}#{src.get('shareName') or ''}#{volume.get('name', '')}#{namespace or 'default'}"
    elif kind == "vsphereVolume":
        handle = str(src.get("volumePath") or "")
    else:  # cinder, portworxVolume
        handle = str(src.get("volumeID") or "")
    return driver, handle


def translate_pv(pv: PersistentVolume) -> PersistentVolume:
    """A migratable in-tree PV as the CSI volume it translates to (``TranslateInTreePVToCSI``): the CSI
    driver and handle, and (AWS EBS, GCE PD, Cinder) its zone topology moved to the driver's key."""
    kind = next(iter(pv.in_tree), None)
    if kind is None:
        raise TranslationError(f"could not find in-tree plugin translation logic for {pv.name!r}")
    src = pv.in_tree[kind]
    plugin = IN_TREE_PLUGIN_OF_SOURCE[kind]
    if kind == "gcePersistentDisk":
        label = pv.labels.get(LABEL_BETA_ZONE) or pv.labels.get(LABEL_ZONE, "")
        zones = label.split(MULTI_ZONE_DELIMITER)
        disk = src.get("pdName") or ""
        if len(zones) == 1 and zones[0]:
            handle = f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{disk}"
        elif len(zones) > 1:
            regions = set()
            for z in zones:
                parts = z.split("-")
                if len(parts) != 3:
                    raise TranslationError(f"failed to get region from zones: zone in unexpected format, expected: "
                                           f"{{locale}}-{{region}}-{{zone}}, got: {z}")
                regions.add("-".join(parts[:2]))
            if len(regions) != 1:
                raise TranslationError(f"failed to get region from zones: multiple or no regions gotten from "
                                       f"zones, got: {sorted(regions)}")
            handle = f"projects/{UNSPECIFIED}/regions/{regions.pop()}/disks/{disk}"
        else:
            handle = f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{disk}"
    elif kind == "awsElasticBlockStore":
        handle = _ebs_volume_id(str(src.get("volumeID") or ""))
    elif kind == "azureDisk":
        handle = _azure_disk_handle(src)
    elif kind == "azureFile":
        account = _azure_file_account(str(src.get("secretName") or ""))
        namespace = src.get("secretNamespace") or (pv.claim_ref.namespace if pv.claim_ref else "")
        if not namespace:
            raise TranslationError("could not find a secret namespace in PersistentVolumeSource or ClaimRef")
        group = pv.annotations.get("kubernetes.io/azure-file-resource-group", "")
        handle = f"{group}#{account}#{src.get('shareName') or ''}#{pv.name}#{namespace}"
    elif kind == "vsphereVolume":
        handle = str(src.get("volumePath") or "")
    else:
        handle = str(src.get("volumeID") or "")
    out = pv.copy()
    out.in_tree = {}
    out.csi_driver = CSI_DRIVER_OF_IN_TREE_PLUGIN[plugin]
    out.csi_handle = handle
    if plugin in _CSI_ZONE_KEY:
        out.node_affinity = _translate_topology(pv, _CSI_ZONE_KEY[plugin])
    return out


def _affinity_keys(sel: NodeSelector | None) -> set[str]:
    return {r.key for t in (sel.terms if sel is not None else ()) for r in t.expressions}


def _translate_topology(pv: PersistentVolume, csi_key: str) -> NodeSelector | None:
    """``translateTopologyFromInTreeToCSI``: the zone requirements (or the zone label) under the CSI key,
    a beta region key replaced by the GA one."""
    sel = pv.node_affinity
    keys = _affinity_keys(sel)
    if LABEL_ZONE in keys:
        zone_label, region_label = LABEL_ZONE, LABEL_REGION
    elif LABEL_BETA_ZONE in keys:
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    elif LABEL_ZONE in pv.labels:
        zone_label, region_label = LABEL_ZONE, LABEL_REGION
    elif LABEL_BETA_ZONE in pv.labels:
        zone_label, region_label = LABEL_BETA_ZONE, LABEL_BETA_REGION
    else:
        zone_label, region_label = LABEL_ZONE, LABEL_REGION

    def rekey(s: NodeSelector | None, old: str, new: str) -> NodeSelector:
        assert s is not None
        return NodeSelector(tuple(NodeSelectorTerm(tuple(Requirement(new, r.op, r.values) if r.key == old else r
                                                         for r in t.expressions), t.fields, t.valid)
                                  for t in s.terms))

    if any(r.values for t in (sel.terms if sel is not None else ()) for r in t.expressions if r.key == zone_label):
        sel = rekey(sel, zone_label, csi_key)
    elif zone_label in pv.labels:
        zones = sorted({z.strip() for z in pv.labels[zone_label].split(MULTI_ZONE_DELIMITER) if z.strip()})
        if zones:
            req = Requirement(csi_key, "In", frozenset(zones))
            terms = sel.terms if sel is not None and sel.terms else (NodeSelectorTerm((), (), True),)
            sel = NodeSelector(tuple(NodeSelectorTerm((*t.expressions, req), t.fields, t.valid) for t in terms))
    if region_label == LABEL_BETA_REGION and sel is not None and any(
            r.values for t in sel.terms for r in t.expressions if r.key == LABEL_BETA_REGION):
        sel = rekey(sel, LABEL_BETA_REGION, LABEL_REGION)
    return sel


# --------------------------------------------------------------------------- pod volumes

def claim_of_volume(pod_name: str, volume: Mapping) -> tuple[str, bool] | None:
    """(claim name, ephemeral) of a pod volume that uses a PersistentVolumeClaim: ``persistentVolumeClaim``,
    or a generic ephemeral volume, whose claim is ``<pod>-<volume>``; None for other volumes."""
    ref = volume.get("persistentVolumeClaim")
    if isinstance(ref, Mapping):
        return str(ref.get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return f"{pod_name}-{volume.get('name', '')}", True
    return None


def ephemeral_owner_error(pod_namespace: str, pod_name: str, pod_uid: str,
                          claim: PersistentVolumeClaim) -> str | None:
    """``ephemeral.VolumeIsForPod``: the claim of a generic ephemeral volume must be controlled by the pod."""
    if claim.namespace != pod_namespace or not claim.controlled_by(pod_uid):
        return (f"PVC {claim.namespace}/{claim.name} was not created for pod {pod_namespace}/{pod_name} "
                f"(pod is not owner)")
    return None


def volume_matches_node(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """``CheckNodeAffinity``: the PV's required node affinity against a node that has only these labels
    (upstream builds a node without a name, so matchFields never match)."""
    sel = pv.node_affinity
    if sel is None:
        return True
    fields = {"metadata.name": ""}
    for t in sel.terms:
        if not t.valid:
            continue
        if all(r.matches(labels) for r in t.expressions) and all(r.matches(fields) for r in t.fields):
            return True
    return False


def topology_matches(terms: tuple[TopologyTerm, ...], labels: Mapping[str, str]) -> bool:
    """``MatchTopologySelectorTerms``: no terms match everything; a term without expressions (or with an
    invalid one) matches nothing; terms are ORed, expressions ANDed (label In values)."""
    if not terms:
        return True
    for t in terms:
        if not t.expressions:
            continue
        ok = True
        for key, values in t.expressions:
            if label_key_error(key) or not values or any(label_value_error(v) for v in values):
                ok = False
                break
            v = labels.get(key)
            if v is None or v not in values:
                ok = False
                break
        if ok:
            return True
    return False
