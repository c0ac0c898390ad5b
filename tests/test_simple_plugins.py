"""SchedulingGates, PrioritySort, NodePorts, ImageLocality, TaintToleration, NodeName, NodeUnschedulable,
DefaultBinder and the volume/DRA plugins for pods without volumes or claims."""

from __future__ import annotations

import pytest

from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle, NodeScore, NodeToStatus, QueuedPodInfo
from pysched.framework.status import Code
from pysched.plugins import (
    defaultbinder,
    dynamicresources,
    imagelocality,
    nodename,
    nodeports,
    nodeunschedulable,
    nodevolumelimits,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from pysched.snapshot.columns import columns_for
from tests.builders import cluster_state, make_node, make_pod, node_info, verdict_is_filter

MI = 1024 * 1024

# --------------------------------------------------------------------------- SchedulingGates


@pytest.mark.parametrize(("pod", "reason"), [
    (make_pod("p"), None),
    (make_pod("p").gate("example.com/one"), "waiting for scheduling gates: [example.com/one]"),
    (make_pod("p").gate("a", "b", "c"), "waiting for scheduling gates: [a b c]"),
], ids=["no-gates", "one-gate", "three-gates"])
def test_scheduling_gates(pod, reason) -> None:
    st = schedulinggates.factory(None, None).pre_enqueue(pod.pod())
    if reason is None:
        assert st is None
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


# --------------------------------------------------------------------------- PrioritySort


@pytest.mark.parametrize(("a", "b", "less"), [
    ((10, 5.0), (0, 1.0), True),
    ((0, 1.0), (10, 5.0), False),
    ((5, 1.0), (5, 2.0), True),
    ((5, 2.0), (5, 1.0), False),
    ((5, 1.0), (5, 1.0), False),
    ((-1, 0.0), (0, 9.0), False),
], ids=["higher-priority-first", "lower-priority-later", "earlier-timestamp-first", "later-timestamp",
        "equal-is-not-less", "negative-priority"])
def test_priority_sort(a, b, less) -> None:
    qa = QueuedPodInfo(make_pod("a").priority(a[0]).pod(), a[1])
    qb = QueuedPodInfo(make_pod("b").priority(b[0]).pod(), b[1])
    assert queuesort.factory(None, None).less(qa, qb) is less
    assert queuesort.NAME == "PrioritySort"


# --------------------------------------------------------------------------- NodePorts

PORT_CASES = [
    # id, existing pods, incoming pod, expected: "skip" | True (fits) | False (conflict)
    ("no-host-ports-skips", [], make_pod("p").container(ports=[{"containerPort": 80}]), "skip"),
    ("normal-init-ports-ignored", [], make_pod("p").init(ports=[{"containerPort": 80, "hostPort": 80}]), "skip"),
    ("sidecar-ports-count", [make_pod("a").host_port(80)],
     make_pod("p").init(sidecar=True, ports=[{"containerPort": 80, "hostPort": 80}]), False),
    ("free-port", [make_pod("a").host_port(80)], make_pod("p").host_port(81), True),
    ("same-port-any-ip", [make_pod("a").host_port(80)], make_pod("p").host_port(80), False),
    ("other-protocol", [make_pod("a").host_port(53, protocol="UDP")], make_pod("p").host_port(53), True),
    ("same-protocol-udp", [make_pod("a").host_port(53, protocol="UDP")], make_pod("p").host_port(53, protocol="UDP"),
     False),
    ("wildcard-wanted-vs-specific-used", [make_pod("a").host_port(80, ip="10.0.0.1")], make_pod("p").host_port(80),
     False),
    ("specific-wanted-vs-wildcard-used", [make_pod("a").host_port(80)], make_pod("p").host_port(80, ip="10.0.0.1"),
     False),
    ("different-specific-ips", [make_pod("a").host_port(80, ip="10.0.0.2")],
     make_pod("p").host_port(80, ip="10.0.0.1"), True),
    ("same-specific-ip", [make_pod("a").host_port(80, ip="10.0.0.1")], make_pod("p").host_port(80, ip="10.0.0.1"),
     False),
    ("explicit-zero-ip-is-wildcard", [make_pod("a").host_port(80, ip="10.0.0.9")],
     make_pod("p").host_port(80, ip="0.0.0.0"), False),
    ("host-network-incoming-uses-container-port", [make_pod("a").host_port(8080)],
     make_pod("p").host_network().container(ports=[{"containerPort": 8080}]), False),
    ("host-network-existing-uses-container-port",
     [make_pod("a").host_network().container(ports=[{"containerPort": 9090}])], make_pod("p").host_port(9090), False),
    ("own-ports-not-checked-against-each-other", [], make_pod("p").host_port(80).host_port(80), True),
]


@pytest.mark.parametrize(("existing", "pod", "expected"), [c[1:] for c in PORT_CASES], ids=[c[0] for c in PORT_CASES])
def test_node_ports(existing, pod, expected) -> None:
    p = nodeports.factory(None, None)
    state = CycleState()
    parsed = pod.pod()
    res, st = p.pre_filter(state, parsed, [])
    assert res is None
    if expected == "skip":
        assert st is not None and st.code == Code.Skip
        return
    assert st is None
    st = p.filter(state, parsed, node_info(make_node("n"), *existing))
    if expected:
        assert st is None
    else:
        assert st is not None and st.code == Code.Unschedulable
        assert st.reasons == ["node(s) didn't have free ports for the requested pod ports"]


# --------------------------------------------------------------------------- ImageLocality


@pytest.mark.parametrize(("name", "normalized"), [
    ("nginx", "nginx:latest"),
    ("nginx:1.25", "nginx:1.25"),
    ("registry:5000/app", "registry:5000/app:latest"),
    ("registry:5000/app:v2", "registry:5000/app:v2"),
    ("repo/app@sha256:0123abcd", "repo/app@sha256:0123abcd"),
    ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
])
def test_normalized_image_name(name, normalized) -> None:
    assert imagelocality.normalized_image_name(name) == normalized


IMAGE_CASES = [
    # id, nodes (the first is scored), pod, expected score
    ("worked-example-23", [make_node("n1").image(["nginx:1.25"], 500 * MI), make_node("n2")],
     make_pod("p").container(image="nginx:1.25"), 23),
    ("untagged-matches-latest", [make_node("n1").image(["nginx:latest"], 500 * MI), make_node("n2")],
     make_pod("p").container(image="nginx"), 23),
    ("no-registry-prefix-added", [make_node("n1").image(["docker.io/library/nginx:latest"], 500 * MI)],
     make_pod("p").container(image="nginx"), 0),
    ("any-name-of-an-image-matches", [make_node("n1").image(["a:1", "b:2"], 500 * MI), make_node("n2")],
     make_pod("p").container(image="b:2"), 23),
    ("below-min-threshold", [make_node("n1").image(["small:1"], 10 * MI)], make_pod("p").container(image="small:1"), 0),
    ("clamped-to-max", [make_node("n1").image(["big:1"], 5000 * MI)], make_pod("p").container(image="big:1"), 100),
    ("spread-over-all-nodes", [make_node("n1").image(["x:1"], 500 * MI), make_node("n2").image(["x:1"], 500 * MI)],
     make_pod("p").container(image="x:1"), 100 * (500 * MI - 23 * MI) // (1000 * MI - 23 * MI)),
    ("same-image-counted-twice", [make_node("n1").image(["x:1"], 500 * MI)],
     make_pod("p").container(image="x:1").container(image="x:1"), 100 * (1000 * MI - 23 * MI) // (2000 * MI - 23 * MI)),
    ("init-containers-counted", [make_node("n1").image(["x:1"], 500 * MI)],
     make_pod("p").init(image="x:1").container(image="y:1"), 100 * (500 * MI - 23 * MI) // (2000 * MI - 23 * MI)),
    ("float-truncation", [make_node("n1").image(["x:1"], 100 * MI + 1), make_node("n2"), make_node("n3")],
     make_pod("p").container(image="x:1"),
     100 * (int((100 * MI + 1) * (1 / 3)) - 23 * MI) // (1000 * MI - 23 * MI)),
]


@pytest.mark.parametrize(("nodes", "pod", "expected"), [c[1:] for c in IMAGE_CASES], ids=[c[0] for c in IMAGE_CASES])
def test_image_locality(nodes, pod, expected) -> None:
    cs = cluster_state(nodes)
    p = imagelocality.factory(None, Handle(cs))
    assert p.score(CycleState(), pod.pod(), cs.get("n1")) == (expected, None)


# --------------------------------------------------------------------------- TaintToleration


@pytest.mark.parametrize(("node", "pod", "reason"), [
    (make_node("n").taint("k", "v"), make_pod("p"), "node(s) had untolerated taint {k: v}"),
    (make_node("n").taint("k"), make_pod("p"), "node(s) had untolerated taint {k: }"),
    (make_node("n").taint("k", "v", "NoExecute"), make_pod("p"), "node(s) had untolerated taint {k: v}"),
    (make_node("n").taint("k", "v", "PreferNoSchedule"), make_pod("p"), None),
    (make_node("n").taint("k", "v"), make_pod("p").toleration("k", "v"), None),
    (make_node("n").taint("k", "v"), make_pod("p").toleration("k", "w"), "node(s) had untolerated taint {k: v}"),
    (make_node("n").taint("k", "v"), make_pod("p").toleration("k", operator="Exists"), None),
    (make_node("n").taint("k", "v"), make_pod("p").toleration(operator="Exists"), None),
    (make_node("n").taint("k", "v"), make_pod("p").toleration("k", "v", effect="NoExecute"),
     "node(s) had untolerated taint {k: v}"),
    (make_node("n").taint("a", "1").taint("b", "2"), make_pod("p").toleration("a", "1"),
     "node(s) had untolerated taint {b: 2}"),
], ids=["value", "empty-value", "no-execute", "prefer-ignored", "tolerated", "wrong-value", "exists",
        "wildcard-key", "effect-mismatch", "first-untolerated"])
def test_taint_filter(node, pod, reason) -> None:
    st = tainttoleration.factory(None, None).filter(CycleState(), pod.pod(), node_info(node))
    if reason is None:
        assert st is None
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


@pytest.mark.parametrize(("nodes", "pod", "raw", "normalized"), [
    ([make_node("n1"), make_node("n2").taint("a", effect="PreferNoSchedule"),
      make_node("n3").taint("a", effect="PreferNoSchedule").taint("b", effect="PreferNoSchedule")],
     make_pod("p"), [0, 1, 2], [100, 50, 0]),
    ([make_node("n1"), make_node("n2")], make_pod("p"), [0, 0], [100, 100]),
    ([make_node("n1").taint("a", effect="PreferNoSchedule"), make_node("n2").taint("b", effect="PreferNoSchedule")],
     make_pod("p").toleration("a", operator="Exists", effect="PreferNoSchedule"), [0, 1], [100, 0]),
    ([make_node("n1").taint("a", effect="PreferNoSchedule"), make_node("n2").taint("a", effect="NoSchedule")],
     make_pod("p").toleration("a", operator="Exists", effect="NoSchedule"), [1, 0], [0, 100]),
], ids=["counts-0-1-2", "all-zero", "prefer-toleration", "no-schedule-toleration-does-not-count"])
def test_taint_score(nodes, pod, raw, normalized) -> None:
    p = tainttoleration.factory(None, None)
    parsed = pod.pod()
    state = CycleState()
    infos = [node_info(n) for n in nodes]
    assert p.pre_score(state, parsed, infos) is None
    scores = [NodeScore(ni.name, p.score(state, parsed, ni)[0]) for ni in infos]
    assert [s.score for s in scores] == raw
    p.normalize_score(state, parsed, scores)
    assert [s.score for s in scores] == normalized


_TAINTED = [make_node("n0"), make_node("n1").taint("k", "v"), make_node("n2").taint("k", "v").taint("j", "w"),
            make_node("n3").taint("j", "w", "NoExecute"), make_node("n4").taint("k", "v", "PreferNoSchedule")]


@pytest.mark.parametrize("pod", [
    make_pod("p"), make_pod("p").toleration("k", "v"), make_pod("p").toleration("j", operator="Exists"),
    make_pod("p").toleration(operator="Exists"),
], ids=["none", "tolerates-k", "tolerates-j", "tolerates-all"])
def test_taint_batch_verdict_kept_per_tolerations(pod) -> None:
    """batch_filter's verdict is kept per tolerations object and columns: a pod sharing another's
    tolerations gets the same verdict, which agrees with filter node by node (statuses too); other columns
    (an edited cluster) get their own."""
    plugin = tainttoleration.factory(None, None)
    first = pod.pod()
    twin = pod.pod(1)
    twin.tolerations = first.tolerations  # (as the pods parsed from one spec share them)
    cols = columns_for(cluster_state(_TAINTED))
    v = plugin.batch_filter(CycleState(), first, cols)
    assert plugin.batch_filter(CycleState(), twin, cols) is v
    want = verdict_is_filter(plugin, first, v, cols.infos)
    other = columns_for(cluster_state(_TAINTED[:2]))
    w = plugin.batch_filter(CycleState(), twin, other)
    assert w is not v and w.ok.tolist() == [st is None for st in want[:2]]


def test_batch_constants_kept_per_columns() -> None:
    """TaintToleration's and ImageLocality's batch_constant keep what they read of the columns (a
    PreferNoSchedule taint somewhere, an image somewhere) with those columns: other columns get their own
    answer, and the first columns theirs again."""
    plain = columns_for(cluster_state([make_node("n0"), make_node("n1")]))
    tainted = columns_for(cluster_state([make_node("n0"), make_node("n1").taint("k", effect="PreferNoSchedule")]))
    imaged = columns_for(cluster_state([make_node("n0").image(["registry.k8s.io/pause:3.10"], 500 * MI),
                                        make_node("n1")]))
    taints = tainttoleration.factory(None, None)
    images = imagelocality.factory(None, None)
    p = make_pod("p").pod()
    state = CycleState()
    taints.pre_score(state, p, [])
    assert [taints.batch_constant(state, p, c) for c in (plain, tainted, plain)] == [100, None, 100]
    assert images.batch_constant(state, p, plain) == 0
    assert images.batch_constant(state, p, imaged) is None  # (the node with the pod's image scores higher)
    assert images.batch_constant(state, p, plain) == 0


# --------------------------------------------------------------------------- NodeName, NodeUnschedulable


@pytest.mark.parametrize(("pod", "ok"), [
    (make_pod("p"), True), (make_pod("p").node_name("n1"), True), (make_pod("p").node_name("n2"), False),
], ids=["unset", "same", "other"])
def test_node_name(pod, ok) -> None:
    st = nodename.factory(None, None).filter(CycleState(), pod.pod(), node_info(make_node("n1")))
    if ok:
        assert st is None
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable
        assert st.reasons == ["node(s) didn't match the requested node name"]


@pytest.mark.parametrize(("node", "pod", "ok"), [
    (make_node("n"), make_pod("p"), True),
    (make_node("n").unschedulable(), make_pod("p"), False),
    (make_node("n").unschedulable(), make_pod("p").toleration("node.kubernetes.io/unschedulable", operator="Exists",
                                                              effect="NoSchedule"), True),
    (make_node("n").unschedulable(), make_pod("p").toleration(operator="Exists"), True),
    (make_node("n").unschedulable(), make_pod("p").toleration("node.kubernetes.io/unschedulable",
                                                              operator="Exists", effect="NoExecute"), False),
], ids=["schedulable", "cordoned", "tolerated", "tolerate-everything", "wrong-effect"])
def test_node_unschedulable(node, pod, ok) -> None:
    st = nodeunschedulable.factory(None, None).filter(CycleState(), pod.pod(), node_info(node))
    if ok:
        assert st is None
    else:
        assert st is not None and st.code == Code.UnschedulableAndUnresolvable
        assert st.reasons == ["node(s) were unschedulable"]


# --------------------------------------------------------------------------- DefaultBinder


def test_default_binder() -> None:
    assert defaultbinder.factory(None, None).bind(CycleState(), make_pod("p").pod(), "n1") is None


# --------------------------------------------------------------------------- volume and DRA plugins

INERT_PREFILTER = [volumerestrictions, nodevolumelimits, volumebinding, volumezone, dynamicresources]


@pytest.mark.parametrize("module", INERT_PREFILTER, ids=[m.NAME for m in INERT_PREFILTER])
@pytest.mark.parametrize("pod", [make_pod("p"), make_pod("p").volume("scratch", emptyDir={})
                                 .volume("cfg", configMap={"name": "c"})], ids=["no-volumes", "local-volumes"])
def test_volume_plugins_skip_without_claims(module, pod) -> None:
    p = module.factory(None, None)
    state = CycleState()
    parsed = pod.pod()
    res, st = p.pre_filter(state, parsed, [])
    assert res is None and st is not None and st.code == Code.Skip
    # Filter is not run after a Skip; it would pass when state exists
    if module in (volumebinding, dynamicresources):
        assert p.filter(state, parsed, node_info(make_node("n"))) is None


def test_volume_binding_without_pvcs() -> None:
    p = volumebinding.factory(None, None)
    pod = make_pod("p").pod()
    state = CycleState()
    _, st = p.pre_filter(state, pod, [])
    assert st is not None and st.code == Code.Skip and state.has(volumebinding.STATE_KEY)
    st = p.pre_score(state, pod, [])
    assert st is not None and st.code == Code.Skip
    assert p.reserve(state, pod, "n") is None
    st = p.pre_bind_pre_flight(state, pod, "n")
    assert st is not None and st.code == Code.Skip
    assert p.pre_bind(state, pod, "n") is None
    p.unreserve(state, pod, "n")
    st = p.filter(CycleState(), pod, node_info(make_node("n")))
    assert st is not None and st.code == Code.Error and st.message() == "not found"


def test_dynamic_resources_without_claims() -> None:
    p = dynamicresources.factory(None, None)
    pod = make_pod("p").pod()
    assert p.pre_enqueue(pod) is None
    state = CycleState()
    _, st = p.pre_filter(state, pod, [])
    assert st is not None and st.code == Code.Skip
    res, st = p.post_filter(state, pod, NodeToStatus())
    assert res is None and st is not None and st.code == Code.Unschedulable
    assert st.reasons == ["no new claims to deallocate"]
    assert p.reserve(state, pod, "n") is None
    assert p.pre_bind(state, pod, "n") is None
    st = p.pre_bind_pre_flight(state, pod, "n")
    assert st is not None and st.code == Code.Skip


def test_dynamic_resources_post_filter_without_state() -> None:
    # an earlier PreFilter rejected the pod, so DynamicResources' PreFilter never wrote its state
    res, st = dynamicresources.factory(None, None).post_filter(CycleState(), make_pod("p").pod(), NodeToStatus())
    assert res is None and st is not None and st.code == Code.Error and st.message() == "not found"


@pytest.mark.parametrize("module", [volumebinding, dynamicresources], ids=lambda m: m.NAME)
def test_decode_default_args(module) -> None:
    assert module.decode_args(None) is not None
    assert module.factory(module.decode_args(None), None) is not None


@pytest.mark.parametrize(("pod", "skip"), [
    (make_pod("p").volume("d", persistentVolumeClaim={"claimName": "c"}), False),
    (make_pod("p").volume("d", ephemeral={"volumeClaimTemplate": {}}), False),
    (make_pod("p").volume("d", azureDisk={"diskName": "x", "diskURI": "y"}), False),
    (make_pod("p").volume("d", hostPath={"path": "/x"}), True),
], ids=["pvc", "ephemeral", "inline-migratable", "host-path"])
def test_node_volume_limits_prefilter(pod, skip) -> None:
    _, st = nodevolumelimits.factory(None, None).pre_filter(CycleState(), pod.pod(), [])
    assert (st is not None and st.code == Code.Skip) is skip


GCE = {"pdName": "disk-1"}
DISK_CASES = [
    ("gce-same-disk", {"gcePersistentDisk": GCE}, {"gcePersistentDisk": GCE}, False),
    ("gce-both-read-only", {"gcePersistentDisk": {**GCE, "readOnly": True}},
     {"gcePersistentDisk": {**GCE, "readOnly": True}}, True),
    ("gce-other-disk", {"gcePersistentDisk": GCE}, {"gcePersistentDisk": {"pdName": "disk-2"}}, True),
    ("aws-read-only-still-conflicts", {"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}},
     {"awsElasticBlockStore": {"volumeID": "v", "readOnly": True}}, False),
    ("iscsi-same-iqn", {"iscsi": {"iqn": "q", "targetPortal": "t", "lun": 0}},
     {"iscsi": {"iqn": "q", "targetPortal": "t", "lun": 1}}, False),
    ("rbd-overlapping-monitors-default-pool", {"rbd": {"monitors": ["m1", "m2"], "image": "i"}},
     {"rbd": {"monitors": ["m2"], "pool": "rbd", "image": "i"}}, False),
    ("rbd-disjoint-monitors", {"rbd": {"monitors": ["m1"], "image": "i"}}, {"rbd": {"monitors": ["m3"], "image": "i"}},
     True),
]


@pytest.mark.parametrize(("mine", "theirs", "ok"), [c[1:] for c in DISK_CASES], ids=[c[0] for c in DISK_CASES])
def test_volume_restrictions_inline_disks(mine, theirs, ok) -> None:
    p = volumerestrictions.factory(None, None)
    pod = make_pod("p").volume("d", **mine).pod()
    state = CycleState()
    _, st = p.pre_filter(state, pod, [])
    assert st is None
    ni = node_info(make_node("n"), make_pod("a").volume("d", **theirs))
    st = p.filter(state, pod, ni)
    if ok:
        assert st is None
    else:
        assert st is not None and st.code == Code.Unschedulable and st.reasons == ["node(s) had no available disk"]
    assert p.HAS_EXTENSIONS
    assert p.add_pod(state, pod, make_pod("b").pod(), ni) is None
    assert p.remove_pod(state, pod, make_pod("b").pod(), ni) is None
