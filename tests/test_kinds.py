"""The kinds table (pysched.snapshot.kinds) is the one list of kinds: the loader, the live source and
export agree with it, kind by kind."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from pysched.snapshot import export, kinds, loader, validation
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.loader import load_snapshot

_META = {"name": "x1", "creationTimestamp": "2025-01-01T00:00:00Z"}
_TEMPLATE = {"metadata": {"labels": {"app": "x"}},
             "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}
_SELECTOR = {"matchLabels": {"app": "x"}}
_CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "x1"}}]}}

#: one small valid object per kind (its spec; metadata and kind/apiVersion are added from the table)
SPECS: dict[str, dict] = {
    "Node": {"status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
    "Namespace": {},
    "PriorityClass": {"value": 1000},
    "Pod": {"spec": _TEMPLATE["spec"]},
    "PodDisruptionBudget": {"spec": {"minAvailable": 1, "selector": _SELECTOR}},
    "Service": {"spec": {"selector": {"app": "x"}}},
    "ReplicationController": {"spec": {"replicas": 0, "selector": {"app": "x"}, "template": _TEMPLATE}},
    "ReplicaSet": {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    "StatefulSet": {"spec": {"replicas": 0, "serviceName": "x1", "selector": _SELECTOR, "template": _TEMPLATE}},
    "PersistentVolume": {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                                  "hostPath": {"path": "/x"}}},
    "PersistentVolumeClaim": {"spec": {"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}}},
    "StorageClass": {"provisioner": "example.com/x"},
    "CSINode": {"spec": {"drivers": []}},
    "CSIDriver": {"spec": {}},
    "VolumeAttachment": {"spec": {"attacher": "example.com/x", "nodeName": "x1",
                                  "source": {"persistentVolumeName": "x1"}}},
    "CSIStorageCapacity": {"storageClassName": "x1", "capacity": "1Gi"},
    "DeviceClass": {"spec": {}},
    "ResourceSlice": {"spec": {"driver": "example.com/gpu", "pool": {"name": "p", "generation": 1,
                                                                     "resourceSliceCount": 1},
                               "nodeName": "x1", "devices": [{"name": "d0"}]}},
    "ResourceClaim": {"spec": _CLAIM_SPEC},
    "ResourceClaimTemplate": {"spec": {"spec": _CLAIM_SPEC}},
    "Deployment": {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    "DaemonSet": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    "Job": {"spec": {"completions": 1, "parallelism": 0, "template": {
        **_TEMPLATE, "spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"}}}},
    "CronJob": {"spec": {"schedule": "0 0 * * *", "suspend": True, "jobTemplate": {"spec": {"template": {
        **_TEMPLATE, "spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"}}}}}},
    "LimitRange": {"spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]}},
}


def obj(spec: kinds.KindSpec, namespace: str = "default") -> dict:
    meta = dict(_META, namespace=namespace) if spec.namespaced else dict(_META)
    return {"apiVersion": spec.api_version, "kind": spec.kind, "metadata": meta, **SPECS[spec.kind]}


def count(cluster: Cluster, spec: kinds.KindSpec) -> int:
    """Objects of the kind on ``cluster``, beyond those every cluster has (the built-in PriorityClasses)."""
    return len(kinds.stored(cluster, spec)) - len(kinds.stored(loader.build_cluster([]), spec))


def test_the_table_is_well_formed() -> None:
    names = [k.kind for k in kinds.KINDS]
    assert len(names) == len(set(names))
    assert set(SPECS) == set(names), "every kind in the table needs an example here"
    plurals = [k.plural for k in kinds.KINDS]
    assert len(plurals) == len(set(plurals)) and all(p.islower() and p.endswith("s") for p in plurals)
    # the schema validator scopes names by the same table, and knows every kind
    assert validation.CLUSTER_SCOPED is kinds.CLUSTER_SCOPED
    assert loader.USED_KINDS == set(names)


@pytest.mark.parametrize("spec", kinds.KINDS, ids=lambda k: k.kind)
def test_every_kind_loads_into_its_field_and_round_trips_through_export(spec: kinds.KindSpec,
                                                                       tmp_path: Path) -> None:
    src = tmp_path / "in.yaml"
    src.write_text(yaml.safe_dump(obj(spec)))
    cluster = load_snapshot([str(src)], validate="strict")
    assert count(cluster, spec) == 1, f"{spec.kind} is kept in Cluster.{spec.stored_in}"
    assert not cluster.ignored_kinds
    info = export.SnapshotInfo("c", "ctx", "https://k", datetime(2025, 1, 1, tzinfo=UTC), {spec.kind: 1})
    for fmt in export.FORMATS:
        out = tmp_path / f"out.{fmt}"
        export.write_snapshot(str(out), [obj(spec)], info, fmt)
        again = load_snapshot([str(out)], validate="strict")
        assert count(again, spec) == 1, fmt


@pytest.mark.parametrize("spec", kinds.KINDS, ids=lambda k: k.kind)
def test_scope_and_api_version_come_from_the_table(spec: kinds.KindSpec, tmp_path: Path) -> None:
    wrong = dict(obj(spec), apiVersion="example.com/v9")
    src = tmp_path / "in.json"
    src.write_text(json.dumps(wrong))
    with pytest.raises(Exception, match=f"expected apiVersion '{spec.api_version}'"):
        load_snapshot([str(src)])
    two = [obj(spec), obj(spec)]
    two[1]["metadata"] = dict(two[1]["metadata"], namespace="other")
    src.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": two}))
    if spec.namespaced:
        assert count(load_snapshot([str(src)]), spec) == 2
    else:  # a namespace on a cluster-scoped object is ignored, so the second is the same object
        with pytest.raises(Exception, match="duplicate object"):
            load_snapshot([str(src)])


def _isolate_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubeconfig, proxy or in-cluster setting of the machine running the tests leaks in."""
    for var in ("KUBECONFIG", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy",
                "NO_PROXY", "no_proxy", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(var, raising=False)


def _kubeconfig(tmp_path: Path, server: str) -> str:
    """A kubeconfig for the fake API server, with the token it knows."""
    kc = tmp_path / "kubeconfig"
    kc.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t0k3n"}}]}))
    return str(kc)


def test_live_lists_exactly_the_marked_kinds_with_gets_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    live = pytest.importorskip("pysched.snapshot.live", exc_type=ImportError)
    from tests.live_server import KINDS as SERVED, FakeApiServer

    _isolate_from_the_environment(monkeypatch)
    listed = kinds.LISTED_LIVE
    assert [r.kind for r in live.RESOURCES] == [k.kind for k in listed]
    for k in listed:  # the fake speaks kube-apiserver's paths, written independently of the table
        group, version, plural, namespaced = SERVED[k.kind]
        assert (k.api_version, k.plural, k.namespaced) == (f"{group}/{version}" if group else version, plural,
                                                            namespaced)
    objects = [obj(k, namespace="x1") for k in listed]  # in the Namespace listed, so no other is implied
    with FakeApiServer(objects, tokens={"t0k3n": "alice"}) as srv:
        snap = live.read_live(_kubeconfig(tmp_path, srv.url), None)
        methods = {r.method for r in srv.requests}
        paths = {r.path for r in srv.requests}
    assert methods == {"GET"}
    assert {k.api_path for k in listed} <= paths
    cluster = live.cluster_from_live(snap, validate="strict")
    for k in kinds.KINDS:
        assert count(cluster, k) == (1 if k.live is not None else 0), k.kind


def test_live_workloads_count_the_pods_the_cluster_already_runs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Deployments are listed live (as `kubectl get all` lists them); their running pods are counted, so a
    live read creates nothing until an edit asks for more."""
    live = pytest.importorskip("pysched.snapshot.live", exc_type=ImportError)
    from pysched.controllers import ExpansionOptions, expand_cluster, parse_edit_flags
    from tests.builders import make_node, make_pod, make_workload, owned
    from tests.live_server import FakeApiServer

    _isolate_from_the_environment(monkeypatch)
    d = make_workload("Deployment", "api", spec={"replicas": 2})
    t = json.loads(json.dumps(d["spec"]["template"]))
    t["metadata"]["labels"]["pod-template-hash"] = "abc"
    rs = make_workload("ReplicaSet", "api-abc", template=t, owner=("Deployment", "api"), spec={"replicas": 2})
    pods = [owned(make_pod(f"api-abc-{i}").node_name("n1"), "ReplicaSet", "api-abc").obj() for i in (1, 2)]
    for p in pods:
        p["metadata"]["labels"] = dict(t["metadata"]["labels"])
    node = make_node("n1").alloc(cpu="4", memory="8Gi", pods="110").obj()
    with FakeApiServer([node, d, rs, *pods], tokens={"t0k3n": "alice"}) as srv:
        snap = live.read_live(_kubeconfig(tmp_path, srv.url), None)
        assert {r.method for r in srv.requests} == {"GET"}
    cluster = live.cluster_from_live(snap, validate="warn")
    assert [w.meta.name for w in cluster.workloads["Deployment"]] == ["api"]
    opts = ExpansionOptions(now="2025-03-01T09:00:00Z")
    same = expand_cluster(cluster, parse_edit_flags([]), opts)
    assert not same.expansion.created  # type: ignore[attr-defined]
    more = expand_cluster(cluster, parse_edit_flags([("scale", "deployment/default/api=3")]), opts)
    assert len(more.expansion.created) == 1  # type: ignore[attr-defined]
