"""VolumeBinding, VolumeZone, VolumeRestrictions and NodeVolumeLimits with PVs, PVCs, StorageClasses and
CSI objects: the edge cases of upstream's plugin tests, table-driven."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.errors import InputError
from pysched.framework.batch import BatchVerdict
from pysched.framework.config import load_config
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle
from pysched.framework.status import Code, Status
from pysched.model.storage import ANN_SELECTED_NODE
from pysched.plugins import in_tree_registry, nodevolumelimits, volumebinding, volumerestrictions, volumezone
from pysched.report.serialize import to_json
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import columns_for
from pysched.snapshot.loader import Document, build_cluster

ZONE = "topology.kubernetes.io/zone"
EBS = "ebs.csi.example.com"
REASON_NODE = volumebinding.ERR_REASON_NODE_CONFLICT
REASON_BIND = volumebinding.ERR_REASON_BIND_CONFLICT
REASON_SPACE = volumebinding.ERR_REASON_NOT_ENOUGH_SPACE
REASON_NO_PV = volumebinding.ERR_REASON_PV_NOT_EXIST


# --------------------------------------------------------------------------- object builders

def node(name: str, zone: str | None = "zone-a", **labels: str) -> dict:
    lab = {"kubernetes.io/hostname": name, **labels}
    if zone is not None:
        lab[ZONE] = zone
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = EBS,
                  topologies: list[dict[str, list[str]]] | None = None) -> dict:
    d: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                         "provisioner": provisioner, "volumeBindingMode": mode}
    if topologies is not None:
        d["allowedTopologies"] = [{"matchLabelExpressions": [{"key": k, "values": v} for k, v in t.items()]}
                                  for t in topologies]
    return d


def pvc(name: str, size: str = "1Gi", sc: str | None = "wffc", modes: tuple[str, ...] = ("ReadWriteOnce",),
        volume: str = "", bound: bool = False, selector: dict | None = None, annotations: dict | None = None,
        owner: str | None = None, phase: str | None = None, namespace: str = "default") -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    ann = dict(annotations or {})
    if bound:
        ann["pv.kubernetes.io/bind-completed"] = "yes"
    if ann:
        meta["annotations"] = ann
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": f"uid-{owner}",
                                    "controller": True}]
    spec: dict[str, Any] = {"accessModes": list(modes), "resources": {"requests": {"storage": size}}}
    if sc is not None:
        spec["storageClassName"] = sc
    if volume:
        spec["volumeName"] = volume
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec,
            "status": {"phase": phase or ("Bound" if bound else "Pending")}}


def pv(name: str, size: str = "1Gi", sc: str = "wffc", modes: tuple[str, ...] = ("ReadWriteOnce",),
       zone: str | None = None, claim: str | None = None, labels: dict | None = None,
       source: dict | None = None, phase: str | None = None) -> dict:
    spec: dict[str, Any] = {"accessModes": list(modes), "capacity": {"storage": size}, "storageClassName": sc,
                            **(source or {"csi": {"driver": EBS, "volumeHandle": f"vol-{name}"}})}
    if zone is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim, "uid": f"uid-{claim}"}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec, "status": {"phase": phase or ("Bound" if claim else "Available")}}


def csi_node(name: str, *drivers: tuple[str, int | None, list[str]], migrated: str | None = None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if migrated is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    ds = []
    for d, count, keys in drivers:
        entry: dict[str, Any] = {"name": d, "nodeID": f"{name}-{d}", "topologyKeys": keys}
        if count is not None:
            entry["allocatable"] = {"count": count}
        ds.append(entry)
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": meta, "spec": {"drivers": ds}}


def pod(name: str, *claims: str, node_name: str = "", priority: int = 0, **sources: dict) -> dict:
    volumes: list[dict[str, Any]] = [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                                     for i, c in enumerate(claims)]
    volumes += [{"name": k, **v} for k, v in sources.items()]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "volumes": volumes, "priority": priority}
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "uid": f"uid-{name}"}, "spec": spec}


class World:
    """A ClusterState over the objects, and the four plugins on its handle."""

    def __init__(self, *objects: dict) -> None:
        docs = [(Document("test", i + 1, o), o, "") for i, o in enumerate(objects)]
        self.cluster = build_cluster(docs)
        self.state = ClusterState(self.cluster)
        handle = Handle(self.state)
        self.vb = volumebinding.factory(None, handle)
        self.vz = volumezone.factory(None, handle)
        self.vr = volumerestrictions.factory(None, handle)
        self.nvl = nodevolumelimits.factory(None, handle)

    def pod(self, name: str):
        return next(p for p in self.cluster.pods if p.name == name)

    def run(self, plugin, pod_name: str) -> tuple[CycleState, Status | None, dict[str, Status | None]]:
        """PreFilter, then Filter on every node when PreFilter neither rejected nor skipped."""
        state = CycleState()
        p = self.pod(pod_name)
        _, st = plugin.pre_filter(state, p, self.state.node_infos)
        if st is not None and st.code != Code.Success:
            return state, st, {}
        return state, st, {ni.name: plugin.filter(state, p, ni) for ni in self.state.node_infos}


def batch_and_filter(w: World, plugin: Any, pod_name: str) -> tuple[BatchVerdict | None, dict[str, Status | None]]:
    """PreFilter, then the plugin's batched verdict over every node row, then ``filter`` on every node (after
    the verdict: it must not lean on what ``filter`` records). Asserts that a verdict, when there is one,
    is ``filter``'s on every row, the rejected rows' code and reasons too."""
    state = CycleState()
    p = w.pod(pod_name)
    _, st = plugin.pre_filter(state, p, w.state.node_infos)
    assert st is None
    cols = columns_for(w.state)
    verdict = plugin.batch_filter(state, p, cols)
    want = {ni.name: plugin.filter(state, p, ni) for ni in w.state.node_infos}
    if verdict is not None:
        assert_verdict_is(verdict, cols.names_arr.tolist(), want)
    return verdict, want


def assert_verdict_is(verdict: BatchVerdict, names: list[str], want: dict[str, Status | None]) -> None:
    assert {n: bool(ok) for n, ok in zip(names, verdict.ok.tolist(), strict=True)} == \
        {n: st is None or st.code == Code.Success for n, st in want.items()}
    rejected = [r for r, n in enumerate(names) if not verdict.ok[r]]
    got = verdict.statuses(np.array(rejected, dtype=np.int64))
    assert [(s.code, s.reasons) for s in got] == [(want[names[r]].code, want[names[r]].reasons) for r in rejected]


def verdicts(filters: dict[str, Status | None]) -> dict[str, str]:
    """node -> 'ok' or 'Code: reasons'."""
    return {n: "ok" if s is None or s.code == Code.Success else f"{s.code.name}: {', '.join(s.reasons)}"
            for n, s in filters.items()}


WFFC = storage_class("wffc")
IMMEDIATE = storage_class("imm", mode="Immediate")
STATIC = storage_class("local", provisioner="kubernetes.io/no-provisioner")
NODES = [node("a1", "zone-a"), node("b1", "zone-b")]


# --------------------------------------------------------------------------- VolumeBinding: PreFilter

PREFILTER_CASES = [
    ("no-claims", [pod("p", scratch={"emptyDir": {}})], Code.Skip, None),
    ("missing-claim", [pod("p", "nope")], Code.UnschedulableAndUnresolvable,
     'persistentvolumeclaim "nope" not found'),
    ("missing-ephemeral-claim", [pod("p", data={"ephemeral": {"volumeClaimTemplate": {"spec": {}}}})],
     Code.UnschedulableAndUnresolvable,
     'waiting for ephemeral volume controller to create the persistentvolumeclaim "p-data"'),
    ("ephemeral-claim-of-another-pod", [pvc("p-data", owner="other"),
                                        pod("p", data={"ephemeral": {"volumeClaimTemplate": {"spec": {}}}})],
     Code.UnschedulableAndUnresolvable, "PVC default/p-data was not created for pod default/p (pod is not owner)"),
    ("ephemeral-claim-owned", [WFFC, pvc("p-data", owner="p"),
                               pod("p", data={"ephemeral": {"volumeClaimTemplate": {"spec": {}}}})], None, None),
    ("lost-claim", [pvc("c", volume="gone", phase="Lost"), pod("p", "c")], Code.UnschedulableAndUnresolvable,
     'persistentvolumeclaim "c" bound to non-existent persistentvolume "gone"'),
    ("unbound-immediate", [IMMEDIATE, pvc("c", sc="imm"), pod("p", "c")], Code.UnschedulableAndUnresolvable,
     volumebinding.ERR_REASON_UNBOUND_IMMEDIATE),
    ("unbound-without-class-is-immediate", [pvc("c", sc=None), pod("p", "c")],
     Code.UnschedulableAndUnresolvable, volumebinding.ERR_REASON_UNBOUND_IMMEDIATE),
    ("unbound-unknown-class-is-immediate", [pvc("c", sc="nope"), pod("p", "c")],
     Code.UnschedulableAndUnresolvable, volumebinding.ERR_REASON_UNBOUND_IMMEDIATE),
    ("prebound-wffc-is-immediate", [WFFC, pvc("c", volume="v"), pod("p", "c")],
     Code.UnschedulableAndUnresolvable, volumebinding.ERR_REASON_UNBOUND_IMMEDIATE),
    ("bound-immediate", [IMMEDIATE, pv("v", sc="imm", claim="c"), pvc("c", sc="imm", volume="v", bound=True),
                         pod("p", "c")], None, None),
    ("unbound-wffc", [WFFC, pvc("c"), pod("p", "c")], None, None),
]


@pytest.mark.parametrize(("objects", "code", "reason"), [c[1:] for c in PREFILTER_CASES],
                         ids=[c[0] for c in PREFILTER_CASES])
def test_volume_binding_prefilter(objects, code, reason) -> None:
    w = World(*NODES, *objects)
    _, st, _ = w.run(w.vb, "p")
    if code is None:
        assert st is None
    else:
        assert st is not None and st.code == code
        if reason is not None:
            assert st.reasons == [reason]


# --------------------------------------------------------------------------- VolumeBinding: Filter

_EBS_PV = {"awsElasticBlockStore": {"volumeID": "vol-1"}}

FILTER_CASES = [
    ("bound-pv-node-affinity", [pv("v", zone="zone-a", claim="c"), pvc("c", volume="v", bound=True)],
     {"a1": "ok", "b1": f"UnschedulableAndUnresolvable: {REASON_NODE}"}),
    ("bound-pv-missing", [pvc("c", volume="gone", bound=True)],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_NO_PV}", "b1": f"UnschedulableAndUnresolvable: {REASON_NO_PV}"}),
    ("static-pv-node-affinity", [STATIC, pv("v", sc="local", zone="zone-b"), pvc("c", sc="local")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": "ok"}),
    ("static-too-small", [STATIC, pv("v", sc="local", size="1Gi"), pvc("c", sc="local", size="2Gi")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("static-access-modes", [STATIC, pv("v", sc="local", modes=("ReadWriteOnce",)),
                             pvc("c", sc="local", modes=("ReadWriteOnce", "ReadOnlyMany"))],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("static-other-class", [STATIC, storage_class("other", provisioner="kubernetes.io/no-provisioner"),
                            pv("v", sc="other"), pvc("c", sc="local")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("static-selector", [STATIC, pv("v1", sc="local", labels={"tier": "gold"}, zone="zone-a"),
                         pv("v2", sc="local", labels={"tier": "tin"}, zone="zone-b"),
                         pvc("c", sc="local", selector={"matchLabels": {"tier": "gold"}})],
     {"a1": "ok", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("static-not-available", [STATIC, pv("v", sc="local", phase="Released"), pvc("c", sc="local")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("static-falls-back-to-provisioning", [WFFC, pv("v", zone="zone-b"), pvc("c")], {"a1": "ok", "b1": "ok"}),
    ("provision-allowed-topologies", [storage_class("wffc", topologies=[{ZONE: ["zone-b"]}]), pvc("c")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": "ok"}),
    ("provision-topology-term-without-values", [storage_class("wffc", topologies=[{ZONE: []}]), pvc("c")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
    ("selected-node-elsewhere", [WFFC, pvc("c", annotations={ANN_SELECTED_NODE: "b1"})],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_BIND}", "b1": "ok"}),
    ("storage-capacity", [WFFC, {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS},
                                 "spec": {"storageCapacity": True}},
                          {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "wffc",
                           "nodeTopology": {"matchLabels": {ZONE: "zone-a"}}, "capacity": "10Gi"},
                          {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                           "metadata": {"name": "cap-b", "namespace": "kube-system"}, "storageClassName": "wffc",
                           "nodeTopology": {"matchLabels": {ZONE: "zone-b"}}, "capacity": "100Gi",
                           "maximumVolumeSize": "2Gi"},
                          pvc("c", size="5Gi")],
     {"a1": "ok", "b1": f"UnschedulableAndUnresolvable: {REASON_SPACE}"}),
    ("bound-and-unbound-reasons-together", [STATIC, pv("v", zone="zone-b", claim="c1"),
                                            pvc("c1", volume="v", bound=True), pvc("c2", sc="local")],
     {"a1": f"UnschedulableAndUnresolvable: {REASON_NODE}, {REASON_BIND}",
      "b1": f"UnschedulableAndUnresolvable: {REASON_BIND}"}),
]


@pytest.mark.parametrize(("objects", "expected"), [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_volume_binding_filter(objects, expected) -> None:
    claims = [o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"]
    w = World(*NODES, *objects, pod("p", *claims))
    _, st, filters = w.run(w.vb, "p")
    assert st is None
    assert verdicts(filters) == expected


# every FILTER_CASES case, and these: whether VolumeBinding gives a batched verdict (only when no node can
# matter: bound claims, volumes neither in-tree nor with node affinity, or a missing one first)
VB_BATCH_CASES = [
    ("bound-csi-pvs", [pv("v1", claim="c1"), pv("v2", claim="c2"), pvc("c1", volume="v1", bound=True),
                       pvc("c2", volume="v2", bound=True)], True),
    ("missing-pv-after-bound-csi", [pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True),
                                    pvc("c2", volume="gone", bound=True)], True),
    ("missing-pv-after-affinity", [pv("v1", zone="zone-b", claim="c1"), pvc("c1", volume="v1", bound=True),
                                   pvc("c2", volume="gone", bound=True)], False),
    # no node affinity, but translated on a1 (migrated) it gets one from the zone label
    ("bound-in-tree", [csi_node("a1", ("ebs.csi.aws.com", 10, []), migrated="kubernetes.io/aws-ebs"),
                       pv("v1", claim="c1", source=_EBS_PV, labels={ZONE: "zone-b"}),
                       pvc("c1", volume="v1", bound=True)], False),
    ("bound-and-delayed", [WFFC, pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True), pvc("c2")], False),
    *[(c[0], c[1], c[0] == "bound-pv-missing") for c in FILTER_CASES],
]


@pytest.mark.parametrize(("objects", "has_verdict"), [c[1:] for c in VB_BATCH_CASES], ids=[c[0] for c in VB_BATCH_CASES])
def test_volume_binding_batch_verdict_is_filter(objects, has_verdict: bool) -> None:
    claims = [o["metadata"]["name"] for o in objects if o["kind"] == "PersistentVolumeClaim"]
    w = World(*NODES, *objects, pod("p", *claims))
    verdict, _ = batch_and_filter(w, w.vb, "p")
    assert (verdict is not None) is has_verdict


def test_smallest_fitting_pv_is_chosen() -> None:
    w = World(*NODES, STATIC, pv("big", sc="local", size="10Gi"), pv("small", sc="local", size="1Gi"),
              pv("fit-2", sc="local", size="3Gi"), pv("fit-1", sc="local", size="3Gi"),
              pv("mid", sc="local", size="5Gi"), pvc("c", sc="local", size="2Gi"), pod("p", "c"))
    state, _, _ = w.run(w.vb, "p")
    static = state.read(volumebinding.STATE_KEY).by_node["a1"].static
    assert [(c.name, v.name) for c, v in static] == [("c", "fit-2")]  # equal sizes: the first listed


def test_prebound_pv_wins_over_a_smaller_one() -> None:
    w = World(*NODES, STATIC, pv("small", sc="local", size="1Gi"),
              pv("mine", sc="local", size="9Gi", claim="c", phase="Available"), pvc("c", sc="local"), pod("p", "c"))
    state, _, _ = w.run(w.vb, "p")
    assert [v.name for _, v in state.read(volumebinding.STATE_KEY).by_node["a1"].static] == ["mine"]


def test_claims_are_matched_smallest_request_first() -> None:
    # c-big comes first in the pod, but c-small is matched first and takes the 2Gi volume
    w = World(*NODES, STATIC, pv("v2", sc="local", size="2Gi"), pv("v8", sc="local", size="8Gi"),
              pvc("c-big", sc="local", size="2Gi"), pvc("c-small", sc="local", size="1Gi"),
              pod("p", "c-big", "c-small"))
    state, _, filters = w.run(w.vb, "p")
    assert verdicts(filters)["a1"] == "ok"
    pairs = [(c.name, v.name) for c, v in state.read(volumebinding.STATE_KEY).by_node["a1"].static]
    assert pairs == [("c-small", "v2"), ("c-big", "v8")]


@pytest.mark.parametrize(("migrated", "labels", "ok"), [
    ("kubernetes.io/aws-ebs", {}, False),  # translated: the affinity now asks for the CSI zone key
    ("kubernetes.io/aws-ebs", {"topology.ebs.csi.aws.com/zone": "zone-a"}, True),
    (None, {}, True),  # not migrated on the node: the in-tree zone affinity holds
])
def test_bound_in_tree_pv_is_translated_when_migrated(migrated, labels, ok) -> None:
    ebs = {"awsElasticBlockStore": {"volumeID": "aws://zone-a/vol-1"}}
    w = World(node("a1", "zone-a", **labels), csi_node("a1", ("ebs.csi.aws.com", 10, []), migrated=migrated),
              pv("v", zone="zone-a", claim="c", source=ebs), pvc("c", volume="v", bound=True), pod("p", "c"))
    _, _, filters = w.run(w.vb, "p")
    assert (verdicts(filters)["a1"] == "ok") is ok


def _affinity(*terms: list[tuple[str, str, list[str]]]) -> dict:
    return {"nodeAffinity": {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": k, "operator": op, **({"values": v} if v else {})} for k, op, v in t]}
        for t in terms]}}}


@pytest.mark.parametrize("prebound_fits", [True, False])
def test_candidate_index_picks_as_the_plain_loop(prebound_fits) -> None:
    host = "kubernetes.io/hostname"
    shapes = [
        _affinity([(host, "In", ["a1"])]),
        _affinity([(ZONE, "In", ["zone-b"])], [(host, "In", ["a1"])]),
        _affinity([(ZONE, "NotIn", ["zone-a"])]),
        _affinity([(ZONE, "Exists", [])], [(host, "In", ["b1"])]),
        _affinity([(ZONE, "In", ["zone-a"]), (host, "NotIn", ["a1"])]),
        {},
    ]
    vols = []
    for i, shape in enumerate(shapes * 2):
        v = pv(f"v{i:02d}", sc="local", size=f"{10 - i % 5}Gi")
        v["spec"].pop("nodeAffinity", None)
        v["spec"].update(shape)
        vols.append(v)
    mine = pv("mine", sc="local", size="20Gi", claim="c", phase="Available",
              zone="zone-a" if prebound_fits else "zone-c")
    w = World(*NODES, node("a2", "zone-a"), node("c1", "zone-c"), STATIC, *vols, mine,
              pvc("c", sc="local"), pvc("d", sc="local", size="3Gi"), pod("p", "c", "d"))
    picks = {}
    for batched in (True, False):
        w.vb.handle.batched = batched
        state, _, filters = w.run(w.vb, "p")
        by_node = state.read(volumebinding.STATE_KEY).by_node
        picks[batched] = ({n: [(c.name, v.name) for c, v in by_node[n].static] for n in by_node},
                          verdicts(filters))
    assert picks[True] == picks[False]
    assert any(picks[True][0].values())


# --------------------------------------------------------------------------- VolumeBinding: Reserve .. PreBind

def _schedule(w: World, name: str, node_name: str) -> CycleState:
    state, st, filters = w.run(w.vb, name)
    assert st is None and verdicts(filters)[node_name] == "ok"
    p = w.pod(name)
    assert w.vb.reserve(state, p, node_name) is None
    assert w.vb.pre_bind(state, p, node_name) is None
    w.state.bind(p, node_name)
    return state


def test_static_binding_and_provisioning_are_applied() -> None:
    w = World(*NODES, csi_node("b1", (EBS, 5, [ZONE, "kubernetes.io/hostname"])), STATIC, WFFC,
              pv("local-1", sc="local", zone="zone-b"), pvc("c-static", sc="local"), pvc("c-dyn", size="3Gi"),
              pod("p", "c-static", "c-dyn"), pod("q", "c-dyn"))
    state = _schedule(w, "p", "b1")
    assert state.read(volumebinding.TRACE_KEY) == [
        {"pvc": "default/c-static", "decision": "static", "pv": "local-1"},
        {"pvc": "default/c-dyn", "decision": "provision", "pv": "pvc-uid-c-dyn", "node": "b1"}]
    storage = w.state.storage
    claim, vol = storage.claim("default", "c-static"), storage.volume("local-1")
    assert claim.volume_name == "local-1" and claim.phase == "Bound" and claim.fully_bound()
    assert vol.phase == "Bound" and vol.claim_ref.name == "c-static" and vol.claim_ref.uid == "uid-c-static"
    new = storage.volume("pvc-uid-c-dyn")
    assert new.capacity == 3 * 2**30 * 1000 and new.storage_class == "wffc" and new.csi_driver == EBS
    assert new.node_affinity.matches({ZONE: "zone-b", "kubernetes.io/hostname": "b1"}, "")
    assert not new.node_affinity.matches({ZONE: "zone-b", "kubernetes.io/hostname": "b2"}, "")
    # the loaded cluster is untouched: another simulation starts from the snapshot
    assert next(c for c in w.cluster.pvcs if c.name == "c-dyn").volume_name == ""
    # a later pod sees the claim bound to the new volume, on b1 only
    state2 = _schedule(w, "q", "b1")
    assert state2.read(volumebinding.TRACE_KEY) == [
        {"pvc": "default/c-dyn", "decision": "bound", "pv": "pvc-uid-c-dyn"}]
    _, _, filters = w.run(w.vb, "q")
    assert verdicts(filters)["a1"] == f"UnschedulableAndUnresolvable: {REASON_NODE}"


def test_unreserve_forgets_the_assumed_binding() -> None:
    w = World(*NODES, STATIC, pv("only", sc="local"), pvc("c1", sc="local"), pvc("c2", sc="local"),
              pod("p", "c1"), pod("q", "c2"))
    state, _, _ = w.run(w.vb, "p")
    p = w.pod("p")
    assert w.vb.reserve(state, p, "a1") is None
    # while p holds the volume (e.g. waiting on Permit), q finds none
    _, _, filters = w.run(w.vb, "q")
    assert set(verdicts(filters).values()) == {f"UnschedulableAndUnresolvable: {REASON_BIND}"}
    w.vb.unreserve(state, p, "a1")
    _, _, filters = w.run(w.vb, "q")
    assert set(verdicts(filters).values()) == {"ok"}
    assert w.state.storage.volume("only").claim_ref is None


def test_volume_binding_never_scores() -> None:
    w = World(*NODES, STATIC, pv("v", sc="local"), pvc("c", sc="local"), pod("p", "c"))
    state, _, _ = w.run(w.vb, "p")
    assert w.vb.pre_score(state, w.pod("p"), w.state.node_infos).code == Code.Skip


# --------------------------------------------------------------------------- VolumeZone

ZONE_CASES = [
    ("zone-label", [pv("v", claim="c", labels={ZONE: "zone-a"})], "c", {"a1": "ok", "b1": "unresolvable"}),
    ("multi-zone", [pv("v", claim="c", labels={ZONE: "zone-a__zone-b"})], "c", {"a1": "ok", "b1": "ok"}),
    ("beta-label-on-pv", [pv("v", claim="c", labels={"failure-domain.beta.kubernetes.io/zone": "zone-b"})], "c",
     {"a1": "unresolvable", "b1": "ok"}),
    ("region-mismatch", [pv("v", claim="c", labels={"topology.kubernetes.io/region": "r2"})], "c",
     {"a1": "unresolvable", "b1": "unresolvable", "bare": "ok"}),
    ("empty-zone-in-list-ignored", [pv("v", claim="c", labels={ZONE: "zone-a__"})], "c", "skip"),
    ("no-topology-labels", [pv("v", claim="c", zone="zone-a")], "c", "skip"),
]


@pytest.mark.parametrize(("objects", "claim", "expected"), [c[1:] for c in ZONE_CASES], ids=[c[0] for c in ZONE_CASES])
def test_volume_zone(objects, claim, expected) -> None:
    w = World(*NODES, node("bare", None), pvc(claim, volume="v", bound=True), *objects, pod("p", claim))
    _, st, filters = w.run(w.vz, "p")
    if expected == "skip":
        assert st is not None and st.code == Code.Skip
        return
    got = {n: "ok" if s is None else ("unresolvable" if s.code == Code.UnschedulableAndUnresolvable else "?")
           for n, s in filters.items()}
    assert {n: got[n] for n in expected} == expected
    assert got["bare"] == "ok"  # a node without topology labels takes any volume
    for s in filters.values():
        assert s is None or s.reasons == [volumezone.ERR_REASON_CONFLICT]


@pytest.mark.parametrize(("objects", "reason"), [
    ([WFFC, pvc("c")], None),  # unbound WaitForFirstConsumer: skipped
    ([IMMEDIATE, pvc("c", sc="imm")], "PersistentVolume had no name"),
    ([pvc("c", sc="gone")], 'storageclass.storage.k8s.io "gone" not found'),
    ([pvc("c", sc=None)], "PersistentVolumeClaim had no pv name and storageClass name"),
    ([pvc("c", volume="gone", bound=True)], 'persistentvolume "gone" not found'),
    ([], 'persistentvolumeclaim "c" not found'),
], ids=["wffc-unbound", "immediate-unbound", "no-class", "no-class-name", "no-pv", "no-claim"])
def test_volume_zone_prefilter(objects, reason) -> None:
    w = World(*NODES, *objects, pod("p", "c"))
    _, st, _ = w.run(w.vz, "p")
    if reason is None:
        assert st is not None and st.code == Code.Skip
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


# --------------------------------------------------------------------------- VolumeRestrictions

RWOP = ("ReadWriteOncePod",)


def test_read_write_once_pod_conflict_and_preemption() -> None:
    w = World(*NODES, pv("v", claim="c", modes=RWOP), pvc("c", volume="v", bound=True, modes=RWOP),
              pod("holder", "c", node_name="a1"), pod("p", "c"))
    state, st, filters = w.run(w.vr, "p")
    assert st is None
    assert {s.code for s in filters.values()} == {Code.Unschedulable}
    assert {tuple(s.reasons) for s in filters.values()} == {(volumerestrictions.ERR_REASON_RWOP_CONFLICT,)}
    # preemption's dry run removes the holder: the claim is free on every node
    dry = state.clone()
    a1 = w.state.get("a1")
    assert w.vr.remove_pod(dry, w.pod("p"), w.pod("holder"), a1) is None
    assert w.vr.filter(dry, w.pod("p"), w.state.get("b1")) is None
    # a nominated pod that uses the claim counts as a holder again
    assert w.vr.add_pod(dry, w.pod("p"), w.pod("holder"), a1) is None
    assert w.vr.filter(dry, w.pod("p"), a1).code == Code.Unschedulable
    # the original state is untouched by the clone's bookkeeping
    assert w.vr.filter(state, w.pod("p"), a1).code == Code.Unschedulable


@pytest.mark.parametrize(("modes", "holder", "skip"), [
    (RWOP, False, True),  # nobody uses it
    (("ReadWriteOnce",), True, True),  # in use, but not ReadWriteOncePod
    (RWOP, True, False),
])
def test_read_write_once_pod_prefilter_skip(modes, holder, skip) -> None:
    objs = [pvc("c", volume="v", bound=True, modes=modes), pv("v", claim="c", modes=modes), pod("p", "c")]
    if holder:
        objs.append(pod("h", "c", node_name="b1"))
    w = World(*NODES, *objs)
    _, st, _ = w.run(w.vr, "p")
    assert (st is not None and st.code == Code.Skip) is skip


def test_volume_restrictions_missing_claim() -> None:
    w = World(*NODES, pod("p", "nope"))
    _, st, _ = w.run(w.vr, "p")
    assert st.code == Code.UnschedulableAndUnresolvable and st.reasons == ['persistentvolumeclaim "nope" not found']


# --------------------------------------------------------------------------- NodeVolumeLimits

EXCEED = f"Unschedulable: {nodevolumelimits.ERR_REASON_MAX_VOLUME_COUNT}"


def _ebs(volume_id: str) -> dict:
    return {"awsElasticBlockStore": {"volumeID": volume_id}}


LIMIT_CASES = [
    ("csi-limit-reached", [csi_node("a1", (EBS, 2, [])), pv("v1", claim="c1"), pv("v2", claim="c2"),
                           pv("v3", claim="c3"), pvc("c1", volume="v1", bound=True),
                           pvc("c2", volume="v2", bound=True), pvc("c3", volume="v3", bound=True),
                           pod("e1", "c1", node_name="a1"), pod("e2", "c2", node_name="a1"), pod("p", "c3")],
     {"a1": EXCEED, "b1": "ok"}),
    ("shared-volume-not-new", [csi_node("a1", (EBS, 1, [])), pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True),
                               pod("e1", "c1", node_name="a1"), pod("p", "c1")], {"a1": "ok", "b1": "ok"}),
    ("volume-attachment-counts", [csi_node("a1", (EBS, 1, [])), pv("v1", claim="c1"), pv("v2", claim="c2"),
                                  pvc("c2", volume="v2", bound=True),
                                  {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                   "metadata": {"name": "va"}, "spec": {"attacher": EBS, "nodeName": "a1",
                                                                         "source": {"persistentVolumeName": "v1"}}},
                                  pod("p", "c2")], {"a1": EXCEED, "b1": "ok"}),
    ("unbound-claim-counts-against-provisioner", [WFFC, csi_node("a1", (EBS, 0, [])), pvc("c"), pod("p", "c")],
     {"a1": EXCEED, "b1": "ok"}),
    ("no-limit-for-other-driver", [csi_node("a1", ("other.csi", 0, [])), pv("v1", claim="c1"),
                                   pvc("c1", volume="v1", bound=True), pod("p", "c1")], {"a1": "ok", "b1": "ok"}),
    ("migrated-inline-ebs", [csi_node("a1", ("ebs.csi.aws.com", 1, [])),
                             pod("e1", node_name="a1", d=_ebs("vol-1")), pod("p", d=_ebs("vol-2"))],
     {"a1": EXCEED, "b1": "ok"}),
    ("migrated-inline-ebs-same-volume", [csi_node("a1", ("ebs.csi.aws.com", 1, [])),
                                         pod("e1", node_name="a1", d=_ebs("vol-1")),
                                         pod("p", d=_ebs("aws://zone-a/vol-1"))], {"a1": "ok", "b1": "ok"}),
    ("migrated-in-tree-pv", [csi_node("a1", ("pd.csi.storage.gke.io", 1, [])),
                             pv("g1", claim="c1", source={"gcePersistentDisk": {"pdName": "d1"}}),
                             pvc("c1", volume="g1", bound=True), pod("e1", "c1", node_name="a1"),
                             pod("p", d={"gcePersistentDisk": {"pdName": "d2"}})], {"a1": EXCEED, "b1": "ok"}),
    ("inline-without-csinode-not-counted", [pod("e1", node_name="a1", d=_ebs("vol-1")), pod("p", d=_ebs("vol-2"))],
     {"a1": "ok", "b1": "ok"}),
    ("azure-file-not-migrated", [csi_node("a1", ("file.csi.azure.com", 0, [])),
                                 pod("p", d={"azureFile": {"secretName": "s", "shareName": "x"}})],
     {"a1": "ok", "b1": "ok"}),
    ("azure-disk-shared-kind-is-an-error", [csi_node("a1", ("disk.csi.azure.com", 5, [])),
                                            pod("p", d={"azureDisk": {"diskName": "x", "diskURI": "u"}})],
     {"a1": "Error: converting volume(d) from inline to csi: kind(Shared) is not supported in csi migration",
      "b1": "ok"}),
]


@pytest.mark.parametrize("batched", [False, True], ids=["reference", "batched"])
@pytest.mark.parametrize(("objects", "expected"), [c[1:] for c in LIMIT_CASES], ids=[c[0] for c in LIMIT_CASES])
def test_node_volume_limits(objects, expected, batched: bool) -> None:
    w = World(*NODES, *objects)
    w.nvl.handle.batched = batched
    for _ in range(2):  # the second time from what the batched path kept
        _, st, filters = w.run(w.nvl, "p")
        assert st is None
        assert verdicts(filters) == expected


_PX = "pxd.portworx.com"
_ALIEN_EPHEMERAL = {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
# every LIMIT_CASES case, and these: whether NodeVolumeLimits gives a batched verdict (not when filter could
# return an Error or a lookup's own status on some node)
NVL_BATCH_CASES = [
    ("no-csinode", [pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True), pod("p", "c1")], True),
    ("shared-volume-still-over", [csi_node("a1", (EBS, 1, [])), pv("v1", claim="c1"), pv("v2", claim="c2"),
                                  pv("v3", claim="c3"), pvc("c1", volume="v1", bound=True),
                                  pvc("c3", volume="v3", bound=True), pod("e1", "c1", node_name="a1"),
                                  {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                   "metadata": {"name": "va"}, "spec": {"attacher": EBS, "nodeName": "a1",
                                                                         "source": {"persistentVolumeName": "v2"}}},
                                  pod("p", "c1", "c3")], True),
    ("shared-volume-fits-there-only", [csi_node("a1", (EBS, 2, [])), csi_node("b1", (EBS, 1, [])),
                                       pv("v1", claim="c1"), pv("v2", claim="c2"), pvc("c1", volume="v1", bound=True),
                                       pvc("c2", volume="v2", bound=True), pod("e1", "c1", node_name="a1"),
                                       pod("p", "c1", "c2")], True),
    ("two-drivers", [csi_node("a1", (EBS, 1, []), ("other.csi", 0, [])), csi_node("b1", ("other.csi", 1, [])),
                     pv("v1", claim="c1"), pv("o1", claim="d1", source={"csi": {"driver": "other.csi",
                                                                                  "volumeHandle": "o1"}}),
                     pvc("c1", volume="v1", bound=True), pvc("d1", volume="o1", bound=True), pod("p", "c1", "d1")],
     True),
    ("portworx-migrated-on-one-node", [csi_node("a1", (_PX, 0, []), migrated="kubernetes.io/portworx-volume"),
                                       csi_node("b1", (_PX, 0, [])),
                                       pod("p", d={"portworxVolume": {"volumeID": "px-1"}})], True),
    ("missing-claim", [csi_node("a1", (EBS, 5, [])), pod("p", "nope")], False),
    ("usage-error-on-limited-node", [csi_node("a1", (EBS, 5, [])), pvc("e1-d", owner="other"),
                                     pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True),
                                     pod("e1", node_name="a1", d=_ALIEN_EPHEMERAL), pod("p", "c1")], False),
    ("usage-error-on-unlimited-node", [csi_node("b1", (EBS, 5, [])), pvc("e1-d", owner="other"),
                                       pv("v1", claim="c1"), pvc("c1", volume="v1", bound=True),
                                       pod("e1", node_name="a1", d=_ALIEN_EPHEMERAL), pod("p", "c1")], True),
    *[(c[0], c[1], c[0] != "azure-disk-shared-kind-is-an-error") for c in LIMIT_CASES],
]


@pytest.mark.parametrize(("objects", "has_verdict"), [c[1:] for c in NVL_BATCH_CASES],
                         ids=[c[0] for c in NVL_BATCH_CASES])
def test_node_volume_limits_batch_verdict_is_filter(objects, has_verdict: bool) -> None:
    w = World(*NODES, *objects)
    for _ in range(2):  # the second time from the rows it kept
        verdict, _ = batch_and_filter(w, w.nvl, "p")
        assert (verdict is not None) is has_verdict


def test_node_volume_limits_batch_verdict_follows_binds_and_storage() -> None:
    """The kept rows are read again when a pod joins a node (the columns' row log) and when a claim or
    volume an existing pod's usage read changes (StorageState.changes)."""
    w = World(*NODES, csi_node("a1", (EBS, 1, [])), csi_node("b1", (EBS, 1, [])), WFFC, pv("v2", claim="c2"),
              pv("v3", claim="c3"), pvc("c1"), pvc("c2", volume="v2", bound=True), pvc("c3", volume="v3", bound=True),
              pod("e1", "c1", node_name="a1"), pod("e3", "c3"), pod("p", "c2"))
    verdict, want = batch_and_filter(w, w.nvl, "p")
    assert verdict is not None and verdicts(want) == {"a1": EXCEED, "b1": "ok"}
    w.state.bind(w.pod("e3"), "b1")
    verdict, want = batch_and_filter(w, w.nvl, "p")
    assert verdict is not None and verdicts(want) == {"a1": EXCEED, "b1": EXCEED}
    storage = w.nvl.storage
    storage.bind_static(storage.claim("default", "c1"), storage.volume("v2"))  # e1's volume is now p's
    verdict, want = batch_and_filter(w, w.nvl, "p")
    assert verdict is not None and verdicts(want) == {"a1": "ok", "b1": EXCEED}


def test_node_volume_limits_forgets_what_a_binding_changed() -> None:
    """The batched path keeps the attachable volumes of the pods already on a node; once a claim of theirs
    is bound (here to the new pod's volume, which then is no longer new) it reads them again."""
    w = World(*NODES, csi_node("a1", (EBS, 1, [])), WFFC, pv("v2", claim="c2"), pvc("c1"),
              pvc("c2", volume="v2", bound=True), pod("e1", "c1", node_name="a1"), pod("p", "c2"))
    for batched in (True, False):
        w.nvl.handle.batched = batched
        assert verdicts(w.run(w.nvl, "p")[2]) == {"a1": EXCEED, "b1": "ok"}, batched
    storage = w.nvl.storage
    storage.bind_static(storage.claim("default", "c1"), storage.volume("v2"))
    for batched in (True, False):
        w.nvl.handle.batched = batched
        assert verdicts(w.run(w.nvl, "p")[2]) == {"a1": "ok", "b1": "ok"}, batched


def test_node_volume_limits_missing_claim_is_unresolvable() -> None:
    w = World(*NODES, pod("p", "nope"))
    st = w.nvl.filter(CycleState(), w.pod("p"), w.state.get("a1"))
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ['looking up PVC default/nope: persistentvolumeclaim "nope" not found']


# --------------------------------------------------------------------------- through the simulation

def test_simulation_traces_volume_binding() -> None:
    objects = [*NODES, csi_node("a1", (EBS, 1, [ZONE])), csi_node("b1", (EBS, 5, [ZONE])), WFFC, IMMEDIATE,
               pvc("c1"), pvc("c2"), pvc("c3", sc="imm"),
               pod("p1", "c1", priority=3), pod("p2", "c1", "c2", priority=2), pod("p3", "c3", priority=1)]
    cluster = build_cluster([(Document("t", i + 1, o), o, "") for i, o in enumerate(objects)])
    registry = in_tree_registry()
    result = Simulation(cluster, load_config(None, registry), registry, SimulationOptions(trace=True)).run()
    cycles = {c["pod"]: c for c in json.loads(json.dumps(result.to_dict()))["cycles"] if c["pass"] == 1}
    assert result.not_simulated == []
    p1 = cycles["default/p1"]
    assert p1["volume_binding"] == [{"pvc": "default/c1", "decision": "provision", "pv": "pvc-uid-c1",
                                     "node": "a1"}]
    # p2 shares c1, now bound in zone-a; its own claim c2 would exceed a1's limit of 1 volume
    p2 = cycles["default/p2"]
    assert p2["outcome"] == "Unschedulable"
    assert p2["filter"]["a1"] == {"plugin": "NodeVolumeLimits", "code": "Unschedulable",
                                  "reasons": [nodevolumelimits.ERR_REASON_MAX_VOLUME_COUNT]}
    assert p2["filter"]["b1"]["reasons"] == [REASON_NODE]
    assert cycles["default/p3"]["prefilter_reject"]["reasons"] == [volumebinding.ERR_REASON_UNBOUND_IMMEDIATE]
    assert "volume_binding" not in cycles["default/p3"]
    # the short form carries the decisions too
    short = result.cycles[0].to_dict(False)
    assert short["volume_binding"] == p1["volume_binding"]


# --------------------------------------------------------------------------- loading

@pytest.mark.parametrize(("obj", "field"), [
    (pv("v", size="lots"), "spec.capacity.storage"),
    (pvc("c", modes=("ReadWriteSometimes",)), "spec.accessModes[0]"),
    (storage_class("s", mode="Later"), "volumeBindingMode"),
    (csi_node("n", (EBS, -1, [])), "spec.drivers[0].allocatable.count"),
    ({**pvc("c"), "spec": {"selector": {"matchLabels": {"a": "b c"}}}}, "spec.selector.matchLabels"),
], ids=["pv-capacity", "pvc-access-mode", "class-binding-mode", "csinode-count", "pvc-selector"])
def test_bad_storage_objects_name_the_field(obj, field) -> None:
    with pytest.raises(InputError) as e:
        build_cluster([(Document("t.yaml", 1, obj), obj, "")])
    assert e.value.field == field


def test_storage_kinds_are_read_not_ignored() -> None:
    objects = [node("a1"), WFFC, pv("v"), pvc("c"), csi_node("a1"),
               {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": EBS}, "spec": {}},
               {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
                "spec": {"attacher": EBS, "nodeName": "a1", "source": {"persistentVolumeName": "v"}}}]
    cluster = build_cluster([(Document("t", i + 1, o), o, "") for i, o in enumerate(objects)])
    assert cluster.ignored_kinds == []
    assert [v.name for v in cluster.pvs] == ["v"] and [c.key for c in cluster.pvcs] == ["default/c"]
    assert set(cluster.storage_classes) == {"wffc"} and set(cluster.csi_nodes) == {"a1"}
    assert cluster.csi_drivers[EBS].attach_required and not cluster.csi_drivers[EBS].storage_capacity
    assert cluster.volume_attachments[0].pv_name == "v"


# --------------------------------------------------------------------------- both paths, generated clusters

def volume_cluster(seed: int, n_nodes: int, n_running: int, n_pending: int) -> list[dict]:
    """Nodes with and without CSINodes (small limits for two CSI drivers, some without a count, some listing
    Portworx or EBS as migrated), claims bound to CSI volumes (some with zone affinity, some shared by many
    pods, some attached through VolumeAttachments), to missing or in-tree volumes, unbound delayed claims,
    inline EBS and Portworx volumes; running pods on the nodes and pending ones of two priorities."""
    rng = random.Random(seed)
    names = [f"n{i:03d}" for i in range(n_nodes)]
    objects: list[dict] = [node(n, rng.choice(["zone-a", "zone-b"])) for n in names]
    for n in names:
        if rng.random() < 0.15:
            continue
        drivers = [(EBS, rng.choice([0, 1, 1, 2, 3, None]), [ZONE])]
        if rng.random() < 0.5:
            drivers.append(("ebs.csi.aws.com", rng.choice([1, 2]), []))
        if rng.random() < 0.3:
            drivers.append((_PX, rng.choice([0, 1]), []))
        migrated = rng.choice([None, None, "kubernetes.io/portworx-volume", "kubernetes.io/aws-ebs"])
        objects.append(csi_node(n, *drivers, migrated=migrated))
    objects.append(WFFC)
    claims: list[str] = []
    for j in range(max(8, n_pending // 2)):
        c = f"c{j:03d}"
        claims.append(c)
        kind = rng.random()
        if kind < 0.5:
            objects += [pv(f"v{j:03d}", claim=c, zone=rng.choice([None, None, None, "zone-a"])),
                        pvc(c, volume=f"v{j:03d}", bound=True)]
            if rng.random() < 0.1:
                objects.append({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
                                "metadata": {"name": f"va{j}"},
                                "spec": {"attacher": EBS, "nodeName": rng.choice(names),
                                         "source": {"persistentVolumeName": f"v{j:03d}"}}})
        elif kind < 0.6:
            objects.append(pvc(c, volume="gone", bound=True))
        elif kind < 0.7:
            objects += [pv(f"v{j:03d}", claim=c, source={"awsElasticBlockStore": {"volumeID": f"vol-{j}"}},
                           labels={ZONE: "zone-a"}), pvc(c, volume=f"v{j:03d}", bound=True)]
        else:
            objects.append(pvc(c))

    def volumes(k: int) -> tuple[list[str], dict[str, dict]]:
        picked = rng.sample(claims[:8], 1) if rng.random() < 0.3 else []  # a few claims many pods share
        picked += rng.sample(claims, k)
        inline: dict[str, dict] = {}
        if rng.random() < 0.2:
            inline["ebs"] = _ebs(f"vol-inline-{rng.randrange(6)}")
        if rng.random() < 0.1:
            inline["px"] = {"portworxVolume": {"volumeID": f"px-{rng.randrange(4)}"}}
        return list(dict.fromkeys(picked)), inline

    for i in range(n_running):
        picked, inline = volumes(rng.randrange(3))
        objects.append(pod(f"r{i:03d}", *picked, node_name=rng.choice(names), **inline))
    for i in range(n_pending):
        picked, inline = volumes(rng.randrange(1, 4))
        objects.append(pod(f"p{i:03d}", *picked, priority=rng.choice([0, 0, 10]), **inline))
    return objects


def _traces(objects: list[dict]) -> tuple[str, str]:
    """The ``--trace`` JSON of the batched path and of the reference path."""
    out = {}
    registry = in_tree_registry()
    config = load_config(None, registry)
    for batched in (True, False):
        cluster = build_cluster([(Document("t", i + 1, o), o, "") for i, o in enumerate(objects)])
        result = Simulation(cluster, config, registry, SimulationOptions(trace=True, batched=batched)).run()
        out[batched] = to_json(result.to_dict())
    return out[True], out[False]


def _count_verdicts(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """Per plugin: [verdicts given, None returned] by its batch_filter from now on."""
    counts: dict[str, list[int]] = {}
    for cls in (nodevolumelimits.NodeVolumeLimits, volumebinding.VolumeBinding):
        tally = counts[cls.NAME] = [0, 0]

        def counted(self: Any, state: Any, pod: Any, cols: Any, _f: Any = cls.batch_filter,
                    _t: list[int] = tally) -> Any:
            v = _f(self, state, pod, cols)
            _t[0 if v is not None else 1] += 1
            return v

        monkeypatch.setattr(cls, "batch_filter", counted)
    return counts


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_volume_clusters_print_the_same_trace_on_both_paths(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over 64 nodes (the batched Filter's least): the volume plugins' verdicts, where given, are their
    Filter's; limits are hit, and both plugins give verdicts for some pods."""
    counts = _count_verdicts(monkeypatch)
    fast, reference = _traces(volume_cluster(seed, 70, 60, 80))
    assert fast == reference
    rejected_by = {st.get("plugin") for c in json.loads(fast)["cycles"] for st in (c.get("filter") or {}).values()}
    assert {"NodeVolumeLimits", "VolumeBinding"} <= rejected_by
    assert all(given_ > 0 for given_, _ in counts.values()), counts


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), nodes=st.integers(64, 90), running=st.integers(0, 120),
       pending=st.integers(10, 60))
def test_volume_clusters_agree_on_both_paths(seed: int, nodes: int, running: int, pending: int) -> None:
    fast, reference = _traces(volume_cluster(seed, nodes, running, pending))
    assert fast == reference
