"""The controllers layer, rule by rule: what each controller creates and deletes, names, admission
(LimitRanger), the edits (drain and the eviction API, scale-down order, taints, nodes) and the
OrderedReady rule in the simulation."""

from __future__ import annotations

import copy
import re

import pytest

from pysched.controllers import ExpansionOptions, expand_cluster, parse_edit_flags
from pysched.controllers.edits import Edit, parse_scenario
from pysched.errors import InputError
from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.cluster import Cluster
from pysched.snapshot.loader import Document, build_cluster
from pysched.snapshot.names import ALPHABET, fnv32a, make_uid, suffix5, template_hash
from tests.builders import make_node, make_pod, make_workload, owned, pod_template

NOW = "2025-03-01T09:00:00Z"


def load(*objs: dict) -> Cluster:
    return build_cluster([(Document("t.yaml", i + 1, o), o, "") for i, o in enumerate(objs)])


def nodes(n: int, cpu: str = "4", prefix: str = "n") -> list[dict]:
    return [make_node(f"{prefix}{i}").alloc(cpu=cpu, memory="8Gi", pods="110").obj() for i in range(1, n + 1)]


def expand(cluster: Cluster, *edits: tuple[str, str], **opts: object) -> Cluster:
    return expand_cluster(cluster, parse_edit_flags(list(edits)), ExpansionOptions(now=NOW, **opts))  # type: ignore[arg-type]


def created(c: Cluster) -> list:
    exp = c.expansion
    return [p for p in c.pods if p.key in exp.created]  # type: ignore[attr-defined]


def simulate(c: Cluster):
    registry = in_tree_registry()
    return Simulation(c, load_config(None, registry), registry, SimulationOptions()).run()


# ============================================================================================== names
def test_names_are_deterministic_and_shaped_as_upstream() -> None:
    s = suffix5("web/api-/0")
    assert len(s) == 5 and set(s) <= set(ALPHABET) and s == suffix5("web/api-/0")
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C  # FNV-1a test vectors
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", make_uid("Pod", "a", "b"))
    assert template_hash({"a": 1}) != template_hash({"a": 1}, 1)


def test_input_pods_with_generate_name_are_named_in_document_order() -> None:
    p1 = make_pod("x").req(cpu="1").obj()
    p2 = copy.deepcopy(p1)
    for p in (p1, p2):
        del p["metadata"]["name"]
        p["metadata"]["generateName"] = "job-"
    c = load(*nodes(1), p1, p2)
    names = [p.name for p in c.pods]
    assert names == [f"job-{suffix5('default/job-/0')}", f"job-{suffix5('default/job-/1')}"]
    assert "name" not in p1["metadata"]  # the input object is not changed


# ============================================================================================== Deployment
def test_deployment_creates_its_replicaset_and_the_missing_replicas() -> None:
    d = make_workload("Deployment", "api", "web", spec={"replicas": 3})
    c = expand(load(*nodes(2), d))
    rs = c.workloads["ReplicaSet"]
    assert len(rs) == 1
    h = template_hash(d["spec"]["template"])
    assert rs[0].meta.name == f"api-{h}" and rs[0].meta.labels["pod-template-hash"] == h
    assert rs[0].selector.matches({"app": "api", "pod-template-hash": h})
    assert not rs[0].selector.matches({"app": "api"})
    pods = created(c)
    assert [p.name[: -5] for p in pods] == [f"api-{h}-"] * 3
    assert all(p.labels == {"app": "api", "pod-template-hash": h} and p.meta.creation == NOW for p in pods)
    assert {c.pod_workloads[p.key] for p in pods} == {"Deployment/web/api"}
    again = expand(load(*nodes(2), d))
    assert [p.name for p in created(again)] == [p.name for p in pods]  # same input, same names


def test_deployment_counts_the_pods_of_all_its_replicasets_and_reuses_an_equal_one() -> None:
    d = make_workload("Deployment", "api", spec={"replicas": 4})
    t = copy.deepcopy(d["spec"]["template"])
    t["metadata"]["labels"]["pod-template-hash"] = "abc"
    rs_new = make_workload("ReplicaSet", "api-abc", template=t, owner=("Deployment", "api"))
    old_t = pod_template({"app": "api", "pod-template-hash": "old"}, cpu="200m")
    rs_old = make_workload("ReplicaSet", "api-old", template=old_t, owner=("Deployment", "api"))
    running = owned(make_pod("api-old-1").req(cpu="200m").node_name("n1"), "ReplicaSet", "api-old").obj()
    c = expand(load(*nodes(1), d, rs_new, rs_old, running))
    pods = created(c)
    assert len(pods) == 3 and all(p.name.startswith("api-abc-") for p in pods)
    assert [w.meta.name for w in c.workloads["ReplicaSet"]] == ["api-abc", "api-old"]  # none created


def test_replicaset_and_replicationcontroller_create_only_what_is_missing() -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 2})
    rc = make_workload("ReplicationController", "legacy", spec={"replicas": 2})
    have = owned(make_pod("web-1").req(cpu="1").node_name("n1"), "ReplicaSet", "web").obj()
    c = expand(load(*nodes(1), rs, rc, have))
    assert sorted(p.name[:-5] for p in created(c)) == ["legacy-", "legacy-", "web-"]
    rcw = c.workloads["ReplicationController"][0]
    assert rcw.selector_map == {"app": "legacy"}  # defaulted from the template's labels


# ============================================================================================== StatefulSet
def test_statefulset_pods_claims_and_identity() -> None:
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                    "resources": {"requests": {"storage": "1Gi"}}}}
    sts = make_workload("StatefulSet", "db", "data", spec={
        "replicas": 2, "serviceName": "db-headless", "podManagementPolicy": "Parallel",
        "ordinals": {"start": 3}, "volumeClaimTemplates": [claim]})
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "x",
          "metadata": {"name": "std", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}}
    c = expand(load(*nodes(1), sc, sts))
    pods = created(c)
    assert [p.name for p in pods] == ["db-3", "db-4"]
    p = pods[0]
    assert p.labels["statefulset.kubernetes.io/pod-name"] == "db-3"
    assert p.labels["apps.kubernetes.io/pod-index"] == "3"
    assert p.raw["spec"]["hostname"] == "db-3" and p.raw["spec"]["subdomain"] == "db-headless"
    assert p.volumes == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-3"}}]
    claims = {x.meta.name: x for x in c.pvcs}
    assert set(claims) == {"data-db-3", "data-db-4"} and claims["data-db-3"].storage_class == "std"
    assert claims["data-db-3"].meta.labels == {"app": "db"}
    assert not c.ordered_gates  # Parallel


def test_ordered_ready_creates_an_ordinal_only_after_the_one_before_is_bound() -> None:
    sts = make_workload("StatefulSet", "db", spec={"replicas": 3},
                        template=pod_template({"app": "db"}, cpu="3"))
    c = expand(load(*nodes(1, cpu="4"), sts))
    assert c.ordered_gates == {"default/db-1": ("default/db-0",), "default/db-2": ("default/db-0", "default/db-1")}
    r = simulate(c)  # db-0 binds, so db-1 is created (and does not fit); db-2 waits for db-1
    assert r.bindings == {"default/db-0": "n1"}
    assert [p for p, _ in r.not_created] == ["default/db-2"]
    assert {x.pod for x in r.cycles} == {"default/db-0", "default/db-1"}
    r = simulate(expand(load(*nodes(1, cpu="2"), sts)))  # db-0 does not fit: nothing after it is created
    assert [p for p, _ in r.not_created] == ["default/db-1", "default/db-2"]
    assert {x.pod for x in r.cycles} == {"default/db-0"}  # withheld ordinals get no cycle
    assert "waits for default/db-0" in r.not_created[0][1]


# ============================================================================================== DaemonSet
def test_daemonset_picks_nodes_and_writes_its_affinity_and_tolerations() -> None:
    ns = nodes(4)
    ns[0]["metadata"]["labels"]["pool"] = "a"
    ns[1]["metadata"]["labels"]["pool"] = "a"
    ns[1]["spec"] = {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}
    ns[2]["metadata"]["labels"]["pool"] = "a"
    ns[2]["spec"] = {"unschedulable": True, "taints": [{"key": "node.kubernetes.io/unschedulable",
                                                        "effect": "NoSchedule"}]}
    ds = make_workload("DaemonSet", "agent", "kube-system",
                       template=pod_template({"app": "agent"}, nodeSelector={"pool": "a"}))
    c = expand(load(*ns, ds))
    pods = created(c)
    targets = [p.raw["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
               for p in pods]
    assert targets == [{"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                 "values": [n]}]}]} for n in ("n1", "n3")]
    tol = {(t.key, t.effect) for t in pods[0].tolerations}
    assert ("node.kubernetes.io/unschedulable", "NoSchedule") in tol and ("node.kubernetes.io/not-ready", "NoExecute") in tol
    assert pods[0].node_selector == {"pool": "a"} and pods[0].labels["pod-template-generation"] == "1"


def test_daemonset_deletes_pods_on_nodes_that_no_longer_should_run_them() -> None:
    ns = nodes(2)
    ds = make_workload("DaemonSet", "agent", template=pod_template({"app": "agent"}, nodeSelector={"role": "x"}))
    stale = owned(make_pod("agent-abcde").req(cpu="100m").node_name("n1"), "DaemonSet", "agent").obj()
    c = expand(load(*ns, ds, stale))
    assert c.expansion.workloads["DaemonSet/default/agent"].deleted == ["default/agent-abcde"]  # type: ignore[attr-defined]
    assert not created(c) and all(p.name != "agent-abcde" for p in c.pods)


# ============================================================================================== Job, CronJob
def test_indexed_job_creates_the_lowest_free_indexes_up_to_parallelism() -> None:
    job = make_workload("Job", "train", uid="u-1", spec={"completions": 5, "parallelism": 2,
                                                          "completionMode": "Indexed"})
    job["status"] = {"completedIndexes": "0"}
    c = expand(load(*nodes(1), job))
    pods = created(c)
    assert [p.labels["batch.kubernetes.io/job-completion-index"] for p in pods] == ["1", "2"]
    assert [p.name[:-5] for p in pods] == ["train-1-", "train-2-"]
    assert pods[0].raw["spec"]["hostname"] == "train-1"
    assert pods[0].labels["batch.kubernetes.io/controller-uid"] == "u-1" and pods[0].labels["job-name"] == "train"
    assert pods[0].raw["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]


def test_job_defaults_suspension_and_excess_pods() -> None:
    plain = make_workload("Job", "once")
    suspended = make_workload("Job", "later", spec={"suspend": True})
    running = owned(make_pod("later-x").req(cpu="1").node_name("n1"), "Job", "later").obj()
    busy = make_workload("Job", "busy", spec={"parallelism": 1, "completions": 9})
    extra = [owned(make_pod(f"busy-{i}").req(cpu="1").node_name("n1"), "Job", "busy").obj() for i in range(2)]
    c = expand(load(*nodes(1), plain, suspended, running, busy, *extra))
    assert [p.name[:-5] for p in created(c)] == ["once-"]
    rep = c.expansion.workloads  # type: ignore[attr-defined]
    assert rep["Job/default/later"].deleted == ["default/later-x"]
    assert len(rep["Job/default/busy"].deleted) == 1


def test_cronjob_fires_only_when_asked_and_respects_forbid() -> None:
    cj = make_workload("CronJob", "nightly", uid="cj-1")
    forbid = make_workload("CronJob", "strict", spec={"concurrencyPolicy": "Forbid"}, uid="cj-2")
    active_job = make_workload("Job", "strict-1", owner=("CronJob", "strict"))
    c = expand(load(*nodes(1), cj, forbid, active_job))
    assert [p.name[:-5] for p in created(c)] == ["strict-1-"]  # only the input Job's pod
    c = expand(load(*nodes(1), cj, forbid, active_job), run_cronjobs=True)
    minutes = 1740819600 // 60  # NOW
    names = sorted(p.name[:-5] for p in created(c))
    assert names == [f"nightly-{minutes}-", "strict-1-"]
    assert {c.pod_workloads[p.key] for p in created(c)} == {"CronJob/default/nightly", "CronJob/default/strict"}


# ============================================================================================== admission
def test_limitrange_defaults_requests_and_limits_of_created_pods() -> None:
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
          "spec": {"limits": [{"type": "Container", "default": {"memory": "512Mi"},
                               "defaultRequest": {"cpu": "250m"}}]}}
    t = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    rs = make_workload("ReplicaSet", "w", template=t, spec={"replicas": 1})
    c = expand(load(*nodes(1), lr, rs))
    (p,) = created(c)
    res = p.raw["spec"]["containers"][0]["resources"]
    assert res == {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}}
    assert p.requests.milli_cpu == 250


def test_limitrange_rejects_a_template_above_its_max() -> None:
    lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr"},
          "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}
    rs = make_workload("ReplicaSet", "big", template=pod_template({"app": "big"}, cpu="2"))
    c = expand(load(*nodes(1), lr, rs))
    assert not created(c)
    (_name, reason), = c.expansion.workloads["ReplicaSet/default/big"].rejected  # type: ignore[attr-defined]
    assert "maximum cpu usage per Container is 1" in reason
    assert any("not created" in w for w in c.warnings)


# ============================================================================================== edits
def _pdb(name: str, allowed: int, **extra: object) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **extra},
            "status": {"disruptionsAllowed": allowed, "observedGeneration": 1}}


def _running(name: str, node: str, owner: str | None = "web", ready: bool = True) -> dict:
    b = make_pod(name).req(cpu="1").node_name(node)
    b._d["metadata"]["labels"] = {"app": "web"}
    b._d["status"] = {"phase": "Running",
                      "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return (owned(b, "ReplicaSet", owner) if owner else b).obj()


@pytest.mark.parametrize(("pdbs", "evicted", "refused_reason"), [
    ([_pdb("a", 1)], ["default/w1"], None),
    ([_pdb("a", 0)], [], "Cannot evict pod as it would violate the pod's disruption budget."),
    ([_pdb("a", 1), _pdb("b", 1)], [], "This pod has more than one PodDisruptionBudget"),
    ([_pdb("a", -1)], [], 'poddisruptionbudget.policy "a" is forbidden'),
    ([_pdb("a", 0, unhealthyPodEvictionPolicy="AlwaysAllow")], [], "Cannot evict"),
], ids=["allowed", "none-left", "two-pdbs", "negative", "ready-pod-not-exempt"])
def test_drain_goes_through_the_eviction_api(pdbs: list, evicted: list, refused_reason: str | None) -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 1})
    c = expand(load(*nodes(2), rs, *pdbs, _running("w1", "n1")), ("drain", "n1"))
    (e,) = c.expansion.edits  # type: ignore[attr-defined]
    assert e["evicted"] == evicted
    if refused_reason:
        assert refused_reason in e["refused"]["default/w1"]["reason"]
        assert any(p.name == "w1" for p in c.pods)
    else:
        assert e["refused"] == {} and [p.name[:-5] for p in created(c)] == ["web-"]  # the replacement
    node = next(n for n in c.nodes if n.name == "n1")
    assert node.unschedulable and any(t.key == "node.kubernetes.io/unschedulable" for t in node.taints)


def test_drain_decrements_the_budget_and_ignores_daemonset_and_deletes_bare_pods() -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 2})
    ds_pod = owned(make_pod("agent-x").req(cpu="100m").node_name("n1"), "DaemonSet", "agent").obj()
    bare = make_pod("bare").req(cpu="100m").node_name("n1").obj()
    cluster = load(*nodes(2), rs, _pdb("a", 1), _running("w1", "n1"), _running("w2", "n1"), ds_pod, bare)
    c = expand(cluster, ("drain", "n1"))
    (e,) = c.expansion.edits  # type: ignore[attr-defined]
    assert e["evicted"] == ["default/w1"] and list(e["refused"]) == ["default/w2"]
    assert e["ignored"] == ["default/agent-x"] and e["deleted"] == ["default/bare"]
    assert c.pdbs[0].disruptions_allowed == 0 and cluster.pdbs[0].disruptions_allowed == 1  # input intact


def test_unready_pod_is_evicted_without_decrement_when_the_policy_allows() -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 1})
    pdb = _pdb("a", 0, unhealthyPodEvictionPolicy="AlwaysAllow")
    c = expand(load(*nodes(2), rs, pdb, _running("w1", "n1", ready=False)), ("drain", "n1"))
    assert c.expansion.edits[0]["evicted"] == ["default/w1"]  # type: ignore[attr-defined]
    assert c.pdbs[0].disruptions_allowed == 0


def test_scale_down_removes_pods_in_the_replicaset_controllers_order() -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 4})
    pending = owned(make_pod("w-pending").req(cpu="1"), "ReplicaSet", "web").obj()
    unready = _running("w-unready", "n1", ready=False)
    cheap = _running("w-cheap", "n1")
    cheap["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "-5"}
    ready = _running("w-ready", "n2")
    c = expand(load(*nodes(2), rs, ready, cheap, unready, pending), ("scale", "rs/web=1"))
    assert c.expansion.edits[0]["removed"] == ["default/w-cheap", "default/w-pending", "default/w-unready"]  # type: ignore[attr-defined]
    assert [p.name for p in c.pods] == ["w-ready"] and not created(c)


def test_scale_of_a_statefulset_removes_the_highest_ordinals_and_scale_up_creates() -> None:
    sts = make_workload("StatefulSet", "db", spec={"replicas": 3, "podManagementPolicy": "Parallel"})
    pods = [owned(make_pod(f"db-{i}").req(cpu="1").node_name("n1"), "StatefulSet", "db").obj() for i in range(3)]
    c = expand(load(*nodes(1), sts, *pods), ("scale", "sts/default/db=1"))
    assert c.expansion.edits[0]["removed"] == ["default/db-1", "default/db-2"]  # type: ignore[attr-defined]
    c = expand(load(*nodes(1), sts, *pods), ("scale", "statefulset/db=5"))
    assert [p.name for p in created(c)] == ["db-3", "db-4"]


def test_noexecute_taint_evicts_pods_without_a_lasting_toleration() -> None:
    rs = make_workload("ReplicaSet", "web", spec={"replicas": 3})
    stays = _running("w-stays", "n1")
    stays["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]
    timed = _running("w-timed", "n1")
    timed["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                     "tolerationSeconds": 60}]
    goes = _running("w-goes", "n1")
    c = expand(load(*nodes(2), rs, stays, timed, goes), ("taint", "n1=k=v:NoExecute"))
    e = c.expansion.edits[0]  # type: ignore[attr-defined]
    assert e["evicted"] == ["default/w-goes", "default/w-timed"] and e["deleted"] == []
    assert len(created(c)) == 2


def test_node_edits_build_new_nodes_and_leave_the_input_alone() -> None:
    cluster = load(*nodes(2))
    before = copy.deepcopy([n.raw for n in cluster.nodes])
    c = expand(cluster, ("label", "n1=disk=ssd"), ("taint", "n2=gpu:NoSchedule"), ("untaint", "n2=gpu"),
               ("label", "n1=disk-"), ("label", "n2=zone=a"), ("cordon", "n1"), ("uncordon", "n1"),
               ("remove-node", "n2"))
    assert [n.name for n in c.nodes] == ["n1"] and not c.nodes[0].unschedulable and not c.nodes[0].taints
    assert "disk" not in c.nodes[0].labels
    assert [n.raw for n in cluster.nodes] == before and len(cluster.nodes) == 2


def test_add_node_copies_the_node_with_new_names(tmp_path) -> None:
    f = tmp_path / "n.yaml"
    node = make_node("big").alloc(cpu="8", memory="16Gi").label("kubernetes.io/hostname", "big").obj()
    node["metadata"]["uid"] = "drop-me"
    import yaml
    f.write_text(yaml.safe_dump(node))
    ds = make_workload("DaemonSet", "agent")
    c = expand(load(*nodes(1), ds), ("add-node", f"{f}=2"))
    added = [n for n in c.nodes if n.name.startswith("big")]
    assert [n.name for n in added] == ["big-1", "big-2"]
    assert [n.labels["kubernetes.io/hostname"] for n in added] == ["big-1", "big-2"]
    assert added[0].meta.uid != "drop-me" and added[0].meta.creation == NOW
    assert len(created(c)) == 3  # the DaemonSet covers the new nodes


@pytest.mark.parametrize(("edit", "message"), [
    (("drain", "n9"), "no node named 'n9' (closest: "),
    (("scale", "deploy/nope=2"), "no Deployment default/nope"),
    (("scale", "pods/x=2"), "cannot scale kind 'pods'"),
    (("taint", "n1=k:Sometimes"), "expected NODE=KEY[=VALUE]:EFFECT"),
    (("untaint", "n1=absent"), "node n1 has no taint absent"),
    (("label", "n1=novalue"), "expected NODE=KEY=VALUE or NODE=KEY-"),
    (("add-node", "missing.yaml"), "cannot read the node file"),
], ids=["unknown-node", "unknown-workload", "bad-kind", "bad-effect", "no-such-taint", "bad-label", "no-file"])
def test_bad_edits_are_usage_errors(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(InputError) as e:
        expand(load(*nodes(2)), edit)
    assert message in str(e.value) and f"--{edit[0]}" in str(e.value)


def test_scale_of_a_replicaset_owned_by_a_deployment_is_refused() -> None:
    d = make_workload("Deployment", "api")
    rs = make_workload("ReplicaSet", "api-1", owner=("Deployment", "api"))
    with pytest.raises(InputError, match="managed by Deployment default/api"):
        expand(load(*nodes(1), d, rs), ("scale", "rs/api-1=3"))


def test_scenario_files_hold_steps_in_both_forms(tmp_path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("- {drain: n1}\n- {scale: deployment/web/api, replicas: 3}\n- add-node: {file: n.yaml, count: 2}\n"
                 "- {add-node: m.yaml=1}\n")
    edits = parse_scenario(str(f)).edits
    assert [(e.kind, e.value) for e in edits] == [("drain", "n1"), ("scale", "deployment/web/api=3"),
                                                  ("add-node", "n.yaml=2"), ("add-node", "m.yaml=1")]
    assert edits[2].add_node_value() == (str(tmp_path / "n.yaml"), 2)
    f.write_text("- {drian: n1}\n")
    with pytest.raises(InputError, match=r"unknown step 'drian' .closest: drain"):
        parse_scenario(str(f))


def test_edit_values_parse() -> None:
    assert Edit("taint", "n1=k=v:NoExecute", "x").taint_value() == ("n1", "k", "v", "NoExecute")
    assert Edit("taint", "n1=k:NoSchedule", "x").taint_value() == ("n1", "k", "", "NoSchedule")
    assert Edit("untaint", "n1=k:NoSchedule", "x").untaint_value() == ("n1", "k", "NoSchedule")
    assert Edit("label", "n1=a=b", "x").label_value() == ("n1", "a", "b")
    assert Edit("label", "n1=a-", "x").label_value() == ("n1", "a", None)
    assert Edit("scale", "rc/ns/x=0", "x").scale_value() == ("ReplicationController", "ns", "x", 0)


def test_now_defaults_to_one_second_after_the_latest_timestamp() -> None:
    d = make_workload("Deployment", "api", created="2025-03-01T08:00:41.5Z")
    c = expand_cluster(load(*nodes(1), d))
    assert c.expansion.now == "2025-03-01T08:00:42Z"  # type: ignore[attr-defined]
    assert all(p.meta.creation == "2025-03-01T08:00:42Z" for p in created(c))
