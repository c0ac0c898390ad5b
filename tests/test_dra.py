"""DynamicResources and the structured allocator: one table per allocator rule, the CEL extension
functions, the resourceclaim controller's part, and bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pysched.errors import InputError
from pysched.framework.config import load_config
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import Handle, NodeToStatus
from pysched.framework.status import Code, Status
from pysched.model.dracel import CelError, DeviceInput, Version, compile_selector
from pysched.plugins import dynamicresources, in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.loader import Document, build_cluster

GPU = "gpu.example.com"
NUMA = "dra.example.com/numa"
R = "resource.k8s.io/v1"


# --------------------------------------------------------------------------- object builders

def node(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}},
            "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}}


def device_class(name: str = GPU, expr: str = f'device.driver == "{GPU}"') -> dict:
    return {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expr}}] if expr else []}}


def dev(name: str, numa: int = 0, model: str = "a100", mem: str = "40Gi", version: str = "1.2.0") -> dict:
    return {"name": name, "attributes": {"model": {"string": model}, NUMA: {"int": numa},
                                         "driverVersion": {"version": version}},
            "capacity": {"memory": {"value": mem}}}


def rslice(name: str, devices: list[dict], node_name: str | None = None, pool: str | None = None,
           generation: int = 1, count: int = 1, driver: str = GPU, **where: Any) -> dict:
    spec: dict[str, Any] = {"driver": driver, "pool": {"name": pool or node_name or name, "generation": generation,
                                                       "resourceSliceCount": count}, "devices": devices}
    if node_name:
        spec["nodeName"] = node_name
    spec.update(where)
    return {"apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": name}, "spec": spec}


def exactly(name: str = "gpu", cls: str = GPU, count: int | None = None, mode: str | None = None,
            selectors: tuple[str, ...] = (), admin: bool | None = None) -> dict:
    e: dict[str, Any] = {"deviceClassName": cls}
    if count is not None:
        e["count"] = count
    if mode:
        e["allocationMode"] = mode
    if selectors:
        e["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if admin is not None:
        e["adminAccess"] = admin
    return {"name": name, "exactly": e}


def claim(name: str, *requests: dict, constraints: list[dict] | None = None, status: dict | None = None,
          owner: str | None = None) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-claim-{name}"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner, "uid": f"uid-{owner}",
                                    "controller": True}]
    d: dict[str, Any] = {"apiVersion": R, "kind": "ResourceClaim", "metadata": meta,
                         "spec": {"devices": {"requests": list(requests or [exactly()])}}}
    if constraints:
        d["spec"]["devices"]["constraints"] = constraints
    if status:
        d["status"] = status
    return d


def allocated(node_name: str, *devices: str, reserved_for: tuple[str, ...] = (), request: str = "gpu") -> dict:
    return {"allocation": {"devices": {"results": [{"request": request, "driver": GPU, "pool": node_name,
                                                     "device": d} for d in devices]},
                           "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                               {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
            "reservedFor": [{"resource": "pods", "name": p, "uid": f"uid-{p}"} for p in reserved_for]}


def template(name: str, *requests: dict) -> dict:
    return {"apiVersion": R, "kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": list(requests or [exactly()])}}}}


def pod(name: str, claim_name: str | None = None, template_name: str | None = None, node_name: str = "",
        priority: int = 0, cpu: str = "100m", status_claim: str | None = None) -> dict:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}],
                            "priority": priority}
    if claim_name:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimName": claim_name}]
    if template_name:
        spec["resourceClaims"] = [{"name": "dev", "resourceClaimTemplateName": template_name}]
    if node_name:
        spec["nodeName"] = node_name
    d: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}",
                                      "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": spec}
    if status_claim:
        d["status"] = {"resourceClaimStatuses": [{"name": "dev", "resourceClaimName": status_claim}]}
    if node_name:
        d.setdefault("status", {})["phase"] = "Running"
    return d


def load(*objects: dict):
    return build_cluster([(Document("t.yaml", i + 1, o), o, "") for i, o in enumerate(objects)])


class World:
    """A ClusterState over the objects and DynamicResources on its handle."""

    def __init__(self, *objects: dict, batched: bool = True) -> None:
        self.cluster = load(*objects)
        self.state = ClusterState(self.cluster)
        handle = Handle(self.state)
        handle.batched = batched
        self.pl = dynamicresources.factory(None, handle)

    def pod(self, name: str):
        return next(p for p in self.cluster.pods if p.name == name)

    def run(self, pod_name: str) -> tuple[CycleState, Status | None, dict[str, Status | None]]:
        state = CycleState()
        p = self.pod(pod_name)
        _, st = self.pl.pre_filter(state, p, self.state.node_infos)
        if st is not None and st.code != Code.Success:
            return state, st, {}
        return state, st, {ni.name: self.pl.filter(state, p, ni) for ni in self.state.node_infos}

    def place(self, pod_name: str, node_name: str) -> list[dict]:
        """Filter, then Reserve and PreBind on the node: the trace's dra_allocation."""
        state, st, filters = self.run(pod_name)
        assert st is None and filters[node_name] is None, (st, filters)
        p = self.pod(pod_name)
        assert self.pl.reserve(state, p, node_name) is None
        assert self.pl.pre_bind(state, p, node_name) is None
        return state.read(dynamicresources.TRACE_KEY)


def verdicts(filters: dict[str, Status | None]) -> dict[str, str]:
    return {n: "ok" if s is None or s.code == Code.Success else f"{s.code.name}: {', '.join(s.reasons)}"
            for n, s in filters.items()}


def devices_of(trace: list[dict]) -> list[list[str]]:
    return [[f"{d['pool']}/{d['device']}:{d['request']}" for d in e["devices"]] for e in trace]


CANNOT = "UnschedulableAndUnresolvable: cannot allocate all claims"
BOTH_PATHS = pytest.mark.parametrize("batched", [True, False], ids=["batched", "reference"])


# --------------------------------------------------------------------------- allocator rules

@BOTH_PATHS
@pytest.mark.parametrize(("request_", "free", "expect"), [
    (exactly(), 3, ["n1/g0:gpu"]),
    (exactly(count=2), 3, ["n1/g0:gpu", "n1/g1:gpu"]),
    (exactly(count=3), 3, ["n1/g0:gpu", "n1/g1:gpu", "n1/g2:gpu"]),
    (exactly(count=4), 3, None),
    (exactly(mode="All"), 3, ["n1/g0:gpu", "n1/g1:gpu", "n1/g2:gpu"]),
    (exactly(mode="All", selectors=('device.attributes["gpu.example.com"].model == "l4"',)), 3, None),
    (exactly(selectors=('device.attributes["gpu.example.com"].model == "a100"',
                        f'device.attributes["{GPU}"].index == 2',)), 3, ["n1/g2:gpu"]),
], ids=["one", "count-2", "count-all-3", "count-too-high", "all", "all-none-selectable", "selectors-and"])
def test_exact_count_and_all(request_, free, expect, batched) -> None:
    devices = [{**dev(f"g{i}"), "attributes": {**dev(f"g{i}")["attributes"], "index": {"int": i}}}
               for i in range(free)]
    w = World(node("n1"), device_class(), rslice("s1", devices, "n1"), claim("c", request_), pod("p", "c"),
              batched=batched)
    _, _, filters = w.run("p")
    if expect is None:
        assert verdicts(filters) == {"n1": CANNOT}
        return
    assert devices_of(w.place("p", "n1")) == [expect]


@BOTH_PATHS
def test_devices_held_by_other_claims_are_in_use_and_admin_access_ignores_that(batched) -> None:
    objs = [node("n1"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"),
            claim("held", status=allocated("n1", "g0", reserved_for=("x",))),
            claim("c", exactly(count=2)), claim("one", exactly()),
            claim("admin", exactly(count=2, admin=True)), pod("p", "c"), pod("q", "one"), pod("a", "admin")]
    w = World(*objs, batched=batched)
    assert verdicts(w.run("p")[2]) == {"n1": CANNOT}
    assert devices_of(w.place("q", "n1")) == [["n1/g1:gpu"]]
    trace = w.place("a", "n1")  # both devices are held now; admin access takes them anyway
    assert devices_of(trace) == [["n1/g0:gpu", "n1/g1:gpu"]]
    assert all(r.admin_access for r in w.state.dra.claims["default/admin"].allocation.results)
    assert ("gpu.example.com", "n1", "g0") in w.state.dra.allocated  # admin results do not count


@BOTH_PATHS
def test_first_available_takes_the_first_subrequest_that_fits(batched) -> None:
    req = {"name": "gpu", "firstAvailable": [
        {"name": "h100", "deviceClassName": GPU, "selectors": [
            {"cel": {"expression": f'device.attributes["{GPU}"].model == "h100"'}}]},
        {"name": "two-a100", "deviceClassName": GPU, "count": 2},
        {"name": "one", "deviceClassName": GPU}]}
    w = World(node("n1"), node("n2"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"),
              rslice("s2", [dev("g0")], "n2"), claim("c", req), pod("p", "c"), batched=batched)
    _, _, filters = w.run("p")
    assert verdicts(filters) == {"n1": "ok", "n2": "ok"}
    assert devices_of(w.place("p", "n1")) == [["n1/g0:gpu/two-a100", "n1/g1:gpu/two-a100"]]


@BOTH_PATHS
def test_first_available_with_a_missing_class_is_rejected_in_prefilter(batched) -> None:
    req = {"name": "gpu", "firstAvailable": [{"name": "x", "deviceClassName": "nope"}]}
    w = World(node("n1"), device_class(), claim("c", req), pod("p", "c"), batched=batched)
    _, st, _ = w.run("p")
    assert st.code == Code.UnschedulableAndUnresolvable
    assert st.reasons == ["request gpu/x: device class nope does not exist"]


@BOTH_PATHS
def test_match_attribute_backtracks_to_a_pair_on_one_numa_node(batched) -> None:
    devices = [dev("g0", numa=0), dev("g1", numa=1), dev("g2", numa=1)]
    constraint = [{"requests": ["a", "b"], "matchAttribute": NUMA}]
    w = World(node("n1"), node("n2"), device_class(), rslice("s1", devices, "n1"),
              rslice("s2", [dev("g0", numa=0), dev("g1", numa=1)], "n2"),
              claim("c", exactly("a"), exactly("b"), constraints=constraint), pod("p", "c"), batched=batched)
    _, _, filters = w.run("p")
    assert verdicts(filters) == {"n1": "ok", "n2": CANNOT}
    assert devices_of(w.place("p", "n1")) == [["n1/g1:a", "n1/g2:b"]]


@BOTH_PATHS
def test_match_attribute_missing_on_a_device_excludes_it(batched) -> None:
    bare = {"name": "g0"}
    constraint = [{"matchAttribute": NUMA}]
    w = World(node("n1"), device_class(), rslice("s1", [bare, dev("g1")], "n1"),
              claim("c", exactly(), constraints=constraint), pod("p", "c"), batched=batched)
    assert devices_of(w.place("p", "n1")) == [["n1/g1:gpu"]]


@BOTH_PATHS
def test_shared_claim_is_reused_and_restricted_to_its_node(batched) -> None:
    objs = [node("n1"), node("n2"), device_class(), rslice("s1", [dev("g0")], "n1"), rslice("s2", [dev("g0")], "n2"),
            claim("shared", status=allocated("n2", "g0", reserved_for=("first",))),
            pod("first", "shared", node_name="n2"), pod("second", "shared")]
    w = World(*objs, batched=batched)
    _, _, filters = w.run("second")
    assert verdicts(filters) == {"n1": "UnschedulableAndUnresolvable: resourceclaim not available on the node",
                                 "n2": "ok"}
    trace = w.place("second", "n2")
    assert trace == [{"claim": "default/shared", "allocated_in_cycle": False,
                      "devices": [{"driver": GPU, "pool": "n2", "device": "g0", "request": "gpu"}]}]
    assert [c.name for c in w.state.dra.claims["default/shared"].reserved_for] == ["first", "second"]


@BOTH_PATHS
def test_node_selector_and_all_nodes_slices(batched) -> None:
    rack = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    objs = [node("n1", rack="r1"), node("n2", rack="r2"), device_class(),
            rslice("rack1", [dev("g0")], pool="rack-pool", nodeSelector=rack),
            claim("c"), pod("p", "c")]
    w = World(*objs, batched=batched)
    assert verdicts(w.run("p")[2]) == {"n1": "ok", "n2": CANNOT}
    w.place("p", "n1")
    sel = w.state.dra.claims["default/c"].allocation.node_selector
    assert sel.matches({"rack": "r1"}, "other") and not sel.matches({"rack": "r2"}, "n1")
    w2 = World(node("n1"), node("n2"), device_class(), rslice("net", [dev("g0")], pool="net", allNodes=True),
               claim("c"), pod("p", "c"), batched=batched)
    assert verdicts(w2.run("p")[2]) == {"n1": "ok", "n2": "ok"}
    w2.place("p", "n2")
    assert w2.state.dra.claims["default/c"].allocation.node_selector is None  # usable from every node


@BOTH_PATHS
def test_pool_generations_incomplete_and_invalid_pools(batched) -> None:
    old = rslice("old", [dev("g9")], "n1", pool="p", generation=1)
    new = rslice("new", [dev("g0")], "n1", pool="p", generation=2)
    w = World(node("n1"), device_class(), old, new, claim("c"), pod("p", "c"), batched=batched)
    assert devices_of(w.place("p", "n1")) == [["p/g0:gpu"]]  # the newer generation replaced the older
    half = rslice("half", [dev("g0")], "n1", pool="p", count=2)
    w = World(node("n1"), device_class(), half, claim("c"), claim("all", exactly(mode="All")),
              pod("p", "c"), pod("q", "all"), batched=batched)
    assert verdicts(w.run("p")[2]) == {"n1": "ok"}  # an incomplete pool still serves ExactCount
    st = w.run("q")[2]["n1"]
    assert st.code == Code.Error and "resource pool gpu.example.com/p is currently being updated" in st.message()
    dup = [rslice("a", [dev("g0")], "n1", pool="p", count=2), rslice("b", [dev("g0")], "n1", pool="p", count=2)]
    w = World(node("n1"), device_class(), *dup, claim("c"), pod("p", "c"), batched=batched)
    st = w.run("p")[2]["n1"]
    assert st.code == Code.Error and st.message() == "pool p is invalid: duplicate device name g0"


@BOTH_PATHS
def test_all_or_nothing_across_the_pods_claims(batched) -> None:
    """Two claims of one pod: the second cannot be allocated, so neither is (Filter fails the node)."""
    p = pod("p")
    p["spec"]["resourceClaims"] = [{"name": "a", "resourceClaimName": "c1"}, {"name": "b", "resourceClaimName": "c2"}]
    w = World(node("n1"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"), claim("c1"),
              claim("c2", exactly(count=2)), p, batched=batched)
    assert verdicts(w.run("p")[2]) == {"n1": CANNOT}
    assert w.state.dra.allocated == {}


@BOTH_PATHS
def test_cel_runtime_error_on_a_device_is_an_error_status(batched) -> None:
    w = World(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"),
              claim("c", exactly(selectors=(f'device.attributes["{GPU}"].nope == 1',))), pod("p", "c"),
              batched=batched)
    st = w.run("p")[2]["n1"]
    assert st.code == Code.Error
    assert st.message().startswith("claim default/c: selector #0: CEL runtime error:")


def test_too_many_devices_for_one_claim_is_an_error() -> None:
    w = World(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"), claim("c", exactly(count=33)),
              pod("p", "c"))
    st = w.run("p")[2]["n1"]
    assert st.code == Code.Error
    assert st.message() == "claim default/c: number of requested devices 33 exceeds the claim limit of 32"


# --------------------------------------------------------------------------- PreEnqueue, PostFilter, controller

@pytest.mark.parametrize(("objs", "reason"), [
    ([pod("p", template_name="missing")], 'pod "default/p": ResourceClaim not created yet'),
    ([pod("p", "nope")], 'resourceclaim.resource.k8s.io "nope" not found'),
    ([claim("c"), pod("p", template_name="t", status_claim="c")],
     "ResourceClaim default/c was not created for pod default/p (pod is not owner)"),
], ids=["template-missing", "claim-missing", "not-owner"])
def test_pre_enqueue_holds_pods_whose_claims_are_not_usable(objs, reason) -> None:
    w = World(node("n1"), device_class(), *objs)
    st = w.pl.pre_enqueue(w.pod("p"))
    assert st is not None and st.code == Code.UnschedulableAndUnresolvable and st.reasons == [reason]


def test_claims_from_templates_are_created_as_the_controller_would() -> None:
    w = World(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"), template("t"), pod("p", template_name="t"))
    assert w.pl.pre_enqueue(w.pod("p")) is None
    (key,) = [k for k, c in w.state.dra.claims.items() if c.generated]
    c = w.state.dra.claims[key]
    assert c.meta.name.startswith("p-dev-") and len(c.meta.name) == len("p-dev-") + 5
    assert c.meta.annotations["resource.kubernetes.io/pod-claim-name"] == "dev"
    assert c.meta.controller_ref()["uid"] == "uid-p"
    assert w.cluster.dra.claims == []  # the loaded objects are untouched


def test_post_filter_deallocates_a_claim_reserved_for_nobody() -> None:
    objs = [node("n1"), node("n2"), device_class(), rslice("s1", [dev("g0")], "n1"), rslice("s2", [dev("g0")], "n2"),
            claim("orphan", status=allocated("n1", "g0")), claim("busy", status=allocated("n1", "g0", reserved_for=("x",))),
            pod("p", "orphan"), pod("q", "busy")]
    w = World(*objs)
    for name, expect in (("q", dynamicresources.MSG_STILL_NOT_SCHEDULABLE), ("p", dynamicresources.MSG_DEALLOCATED)):
        state, _, filters = w.run(name)
        statuses = NodeToStatus()
        statuses.set("n2", filters["n2"].with_plugin(dynamicresources.NAME))
        _, st = w.pl.post_filter(state, w.pod(name), statuses)
        assert st.reasons == [expect]
    assert w.state.dra.claims["default/orphan"].allocation is None
    assert w.state.dra.claims["default/busy"].allocation is not None


def _simulate(*objects: dict, batched: bool = True) -> dict:
    cluster = load(*objects)
    registry = in_tree_registry()
    result = Simulation(cluster, load_config(None, registry), registry,
                        SimulationOptions(trace=True, batched=batched)).run()
    assert result.not_simulated == []
    return json.loads(json.dumps(result.to_dict()))


@BOTH_PATHS
def test_simulation_allocates_and_later_pods_see_devices_taken(batched) -> None:
    out = _simulate(node("n1"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"), template("t"),
                    pod("a", template_name="t"), pod("b", template_name="t"), pod("c", template_name="t"),
                    batched=batched)
    first = {c["pod"]: c for c in out["cycles"] if c["pass"] == 1}
    assert [first[f"default/{p}"]["outcome"] for p in "abc"] == ["Scheduled", "Scheduled", "Unschedulable"]
    assert devices_of(first["default/a"]["dra_allocation"]) == [["n1/g0:gpu"]]
    assert devices_of(first["default/b"]["dra_allocation"]) == [["n1/g1:gpu"]]
    assert first["default/c"]["message"].startswith("0/1 nodes are available: 1 cannot allocate all claims.")


@BOTH_PATHS
def test_preemption_releases_the_victims_claims(batched) -> None:
    """The victim frees CPU; its claim (owned by it) is deleted at once, so the preemptor's next cycle
    gets the victim's device, the first in order. Devices alone never make preemption helpful: a node
    failing DynamicResources is UnschedulableAndUnresolvable."""
    out = _simulate(node("n1"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"), template("t"),
                    claim("low-dev", status=allocated("n1", "g0", reserved_for=("low",)), owner="low"),
                    pod("low", template_name="t", node_name="n1", status_claim="low-dev", cpu="7"),
                    pod("high", template_name="t", priority=100, cpu="7"), batched=batched)
    cycles = [(c["pass"], c["pod"], c["outcome"]) for c in out["cycles"]]
    assert cycles == [(1, "default/high", "Nominated"), (2, "default/high", "Scheduled")]
    assert out["cycles"][0]["victims"] == ["default/low"]
    assert devices_of(out["cycles"][1]["dra_allocation"]) == [["n1/g0:gpu"]]


@BOTH_PATHS
def test_preemption_does_not_help_a_pod_that_lacks_devices(batched) -> None:
    out = _simulate(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"), template("t"),
                    claim("low-dev", status=allocated("n1", "g0", reserved_for=("low",)), owner="low"),
                    pod("low", template_name="t", node_name="n1", status_claim="low-dev"),
                    pod("high", template_name="t", priority=100), batched=batched)
    first = out["cycles"][0]
    assert first["outcome"] == "Unschedulable"
    assert first["message"] == ("0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
                                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")


# --------------------------------------------------------------------------- CEL

def _device(**attrs: Any) -> DeviceInput:
    return DeviceInput(GPU, attrs, {"memory": __import__("fractions").Fraction(40 * 2**30),
                                    "dra.example.com/slots": __import__("fractions").Fraction(3, 2)})


@pytest.mark.parametrize(("expr", "expect"), [
    (f'device.driver == "{GPU}"', True),
    (f'device.attributes["{GPU}"].model == "a100"', True),
    ('device.attributes["dra.example.com"].numa == 1', True),
    ('"numa" in device.attributes["other.example.com"]', False),
    (f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) == 0', True),
    (f'device.capacity["{GPU}"].memory == quantity("40960Mi")', True),
    (f'device.capacity["{GPU}"].memory.isGreaterThan(quantity("39Gi"))', True),
    (f'device.capacity["{GPU}"].memory.isLessThan(quantity("39Gi"))', False),
    ('quantity("1").add(quantity("500m")) == quantity("1500m")', True),
    ('quantity("2").sub(1).asInteger() == 1', True),
    ('device.capacity["dra.example.com"].slots.isInteger()', False),
    ('device.capacity["dra.example.com"].slots.asApproximateFloat() == 1.5', True),
    ('quantity("-3").sign() == -1', True),
    ('isQuantity("1Gi") && !isQuantity("one")', True),
    (f'device.attributes["{GPU}"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
    (f'device.attributes["{GPU}"].driverVersion.compareTo(semver("1.10.0")) < 0', True),
    ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.2").isLessThan(semver("1.0.0-alpha.10"))', True),
    ('semver("2.3.4").major() == 2 && semver("2.3.4").minor() == 3 && semver("2.3.4").patch() == 4', True),
    ('isSemver("1.2.3") && !isSemver("1.2")', True),
    (f'device.attributes["{GPU}"].model.upperAscii() == "A100"', True),
    (f'device.attributes["{GPU}"].model.startsWith("a1")', True),
    ('[1, 2, 3].isSorted() && [3, 1].sum() == 4 && [3, 1].min() == 1 && [3, 1].max() == 3', True),
    (f'cel.bind(a, device.attributes["{GPU}"], a.model == "a100" && a.isNew)', True),
], ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_cel_functions(expr, expect) -> None:
    d = _device(model="a100", isNew=True, driverVersion=Version("1.3.0"), **{"dra.example.com/numa": 1})
    assert compile_selector(expr).matches(d) is expect


@pytest.mark.parametrize(("expr", "message"), [
    ("device.driver ==", "compilation failed"),
    ("device.driver", None),  # dyn: checked at run time
    ("1 + 1", "must evaluate to bool or the unknown type, not int"),
    ("device.nosuch(1)", "compilation failed"),
])
def test_cel_compile_errors(expr, message) -> None:
    if message is None:
        with pytest.raises(CelError, match="could not be converted to bool"):
            compile_selector(expr).matches(_device())
        return
    with pytest.raises(CelError, match=message):
        compile_selector(expr)


@pytest.mark.parametrize("expr", [
    f'device.attributes["{GPU}"].missing == 1',
    'quantity("not a quantity").isInteger()',
    'quantity("1").compareTo(semver("1.0.0")) == 0',
    'quantity("1.5").asInteger() == 1',
])
def test_cel_runtime_errors(expr) -> None:
    with pytest.raises(CelError):
        compile_selector(expr).matches(_device(model="a100"))


# --------------------------------------------------------------------------- bad input

@pytest.mark.parametrize(("obj", "desc", "field"), [
    (device_class(expr="device.driver =="), "DeviceClass gpu.example.com", "spec.selectors[0].cel.expression"),
    (device_class(expr="1"), "DeviceClass gpu.example.com", "spec.selectors[0].cel.expression"),
    (claim("c", exactly(selectors=("device.attributes[",))), "ResourceClaim default/c",
     "spec.devices.requests[0].exactly.selectors[0].cel.expression"),
    (template("t", exactly(selectors=("nope(",))), "ResourceClaimTemplate default/t",
     "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"),
    (claim("c", exactly(mode="Some")), "ResourceClaim default/c", "spec.devices.requests[0].exactly.allocationMode"),
    (claim("c", exactly(count=0)), "ResourceClaim default/c", "spec.devices.requests[0].exactly.count"),
    (claim("c", {"name": "gpu"}), "ResourceClaim default/c", "spec.devices.requests[0]"),
    (rslice("s", [{"name": "g", "attributes": {"v": {"version": "1.2"}}}], "n1"), "ResourceSlice s",
     "spec.devices[0].attributes.v.version"),
    (rslice("s", [{"name": "g", "capacity": {"m": {"value": "lots"}}}], "n1"), "ResourceSlice s",
     "spec.devices[0].capacity.m.value"),
], ids=["class-cel-syntax", "class-cel-not-bool", "claim-cel", "template-cel", "mode", "count", "no-request-kind",
        "version", "capacity"])
def test_bad_dra_objects_name_object_and_field(obj, desc, field) -> None:
    with pytest.raises(InputError) as e:
        load(obj)
    assert e.value.field == field
    assert e.value.obj == desc


def test_dra_kinds_are_read_not_ignored() -> None:
    cluster = load(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"), claim("c"), template("t"))
    assert cluster.ignored_kinds == []
    assert set(cluster.dra.classes) == {GPU} and [s.name for s in cluster.dra.slices] == ["s1"]
    assert [c.key for c in cluster.dra.claims] == ["default/c"] and set(cluster.dra.templates) == {"default/t"}


# --------------------------------------------------------------------------- explain

def test_explain_says_which_request_fails_and_which_claims_hold_the_devices() -> None:
    from pysched.report.explain import change_text
    from pysched.scheduler.explain import explain_pod

    l4 = f'device.attributes["{GPU}"].model == "l4"'
    cluster = load(node("n1"), node("n2"), node("n3"), device_class(),
                   rslice("s1", [dev("g0")], "n1"), rslice("s2", [dev("g0")], "n2"),
                   claim("held", status=allocated("n1", "g0", reserved_for=("runner",))),
                   pod("runner", "held", node_name="n1"),
                   claim("c", exactly(count=1)), claim("l4", exactly(selectors=(l4,))),
                   pod("p", "l4"))
    registry = in_tree_registry()
    e = explain_pod(cluster, load_config(None, registry), registry, "default/p", SimulationOptions())
    texts = {s.node: change_text(s.changes[0], s.node) for s in e.whatif.suggestions}
    assert texts["n3"] == ("claim default/l4 request gpu needs 1 device of class gpu.example.com: no device of "
                           "the class on the node (0 of the class, 0 selected, 0 free)")
    assert texts["n2"].endswith("the selectors are false for every device of the class (1 of the class, "
                                "0 selected, 0 free)")
    # the same pod asking for any GPU: n1's only device is held by a claim of a running pod
    cluster = load(node("n1"), device_class(), rslice("s1", [dev("g0")], "n1"),
                   claim("held", status=allocated("n1", "g0", reserved_for=("runner",))),
                   pod("runner", "held", node_name="n1"), claim("c"), pod("p", "c"))
    e = explain_pod(cluster, load_config(None, registry), registry, "default/p", SimulationOptions())
    (s,) = e.whatif.suggestions
    assert change_text(s.changes[0], "n1") == (
        "claim default/c request gpu needs 1 device of class gpu.example.com: not enough free devices (1 of the "
        "class, 1 selected, 0 free); devices it could use are held by default/held (reserved for default/runner): "
        "deallocating those claims would free them")


# --------------------------------------------------------------------------- capacity

def test_capacity_counts_copies_with_devices() -> None:
    """Each copy of a pod whose claim comes from a template gets its own claim (the controller's part), so
    copies stop when the devices run out."""
    from pysched.scheduler.capacity import CapacityOptions, check_template, run_capacity

    cluster = load(node("n1"), node("n2"), device_class(), rslice("s1", [dev("g0"), dev("g1")], "n1"),
                   rslice("s2", [dev("g0")], "n2"), template("t"))
    tmpl = pod("gpu-job", template_name="t")
    del tmpl["metadata"]["uid"], tmpl["metadata"]["creationTimestamp"]
    registry = in_tree_registry()
    answer = run_capacity(cluster, [check_template(tmpl, "job.yaml")], load_config(None, registry), registry,
                          CapacityOptions())
    (t,) = answer.templates
    assert t.count == 3
    assert dict(t.per_node) == {"n1": 2, "n2": 1}
    assert t.limiting == "cannot allocate all claims"


# --------------------------------------------------------------------------- differential: both paths agree

@st.composite
def worlds(draw) -> list[dict]:
    """A few nodes with 0-4 devices each (and maybe a rack-wide slice), claims of every request kind."""
    n_nodes = draw(st.integers(1, 3))
    objs: list[dict] = [node(f"n{i}", rack=f"r{i % 2}") for i in range(n_nodes)]
    objs.append(device_class())
    objs.append(device_class("a100.example.com", f'device.attributes["{GPU}"].model == "a100"'))
    for i in range(n_nodes):
        devs = [dev(f"g{j}", numa=draw(st.integers(0, 1)), model=draw(st.sampled_from(["a100", "l4"])))
                for j in range(draw(st.integers(0, 4)))]
        objs.append(rslice(f"s{i}", devs, f"n{i}"))
    if draw(st.booleans()):
        rack = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r0"]}]}]}
        objs.append(rslice("rack", [dev("x0"), dev("x1", numa=1)], pool="rack", nodeSelector=rack))
    requests = [exactly(), exactly(count=2), exactly(cls="a100.example.com"), exactly(mode="All"),
                {"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": GPU, "count": 3},
                                                   {"name": "small", "deviceClassName": GPU}]}]
    for k in range(draw(st.integers(1, 6))):
        req = draw(st.sampled_from(requests))
        reqs = [req, exactly("b")] if draw(st.booleans()) else [req]
        cons = [{"matchAttribute": NUMA}] if len(reqs) == 2 and draw(st.booleans()) else None
        objs.append(claim(f"c{k}", *reqs, constraints=cons))
        objs.append(pod(f"p{k}", f"c{k}", priority=draw(st.integers(0, 2))))
    return objs


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(worlds())
def test_batched_and_reference_paths_agree(objs) -> None:
    """The batched path (cached selector results, per-node pools, allocation results reused across pods)
    decides exactly as the reference path that recomputes everything in every cycle."""
    a = _simulate(*objs, batched=True)
    b = _simulate(*objs, batched=False)
    assert a["cycles"] == b["cycles"] and a["bindings"] == b["bindings"]
