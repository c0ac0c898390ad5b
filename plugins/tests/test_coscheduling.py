"""Coscheduling: a pod group binds only when min-member pods of it have a node; otherwise every member
waits (reserved) and is reported with the reason."""

from __future__ import annotations

import pytest
from conftest import config, cycles_of, node, pod, simulate

from pysched.errors import ConfigError
from pysched.framework.registry import Registry

ENABLE = """
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
"""
FIFO_AND_GANG = """
profiles:
- schedulerName: default-scheduler
  plugins:
    queueSort:
      enabled: [{name: FIFOSort}]
      disabled: [{name: "*"}]
    multiPoint:
      enabled: [{name: Coscheduling}]
"""
GROUP = "pod-group.scheduling.example/name"
MIN = "pod-group.scheduling.example/min-member"


def member(name: str, group: str = "train", min_member: int = 3, created: int = 0, **kw: object) -> dict:
    return pod(name, created=created, labels={GROUP: group}, annotations={MIN: str(min_member)}, **kw)  # type: ignore[arg-type]


def test_the_group_binds_together(registry: Registry) -> None:
    objs = [node("n1"), node("n2"), node("n3"), member("a", created=1), member("b", created=2),
            member("c", created=3)]
    result = simulate(objs, config(ENABLE, registry), registry)
    assert sorted(result.bindings) == ["default/a", "default/b", "default/c"]
    assert len(set(result.bindings.values())) == 3
    [a] = cycles_of(result, "default/a")
    assert a.outcome == "Scheduled"
    assert a.message == "waited on Permit (Coscheduling); allowed after the cycle of pod default/c"
    [c] = cycles_of(result, "default/c")
    assert c.outcome == "Scheduled" and c.message is None


def test_a_member_that_fits_nowhere_releases_the_group(registry: Registry) -> None:
    objs = [node("n1"), node("n2"), member("a", created=1), member("b", created=2), member("c", created=3),
            pod("other", created=4)]
    result = simulate(objs, config(ENABLE, registry), registry, passes=1)
    group = 'pod group "default/train"'
    a, b, c = (cycles_of(result, f"default/{n}")[0] for n in "abc")
    assert (a.outcome, b.outcome, c.outcome) == ("Unschedulable",) * 3
    assert a.message == f"Coscheduling: {group} cannot start: member default/c fits on no node"
    assert c.message.endswith(f"{group} cannot start: default/c fits on no node (2 waiting member(s) released)")
    assert "Insufficient cpu" in c.message  # n1 and n2 were reserved by a and b
    # the released nodes are free again for the next pod
    [other] = cycles_of(result, "default/other")
    assert other.outcome == "Scheduled"
    assert result.bindings == {"default/other": other.node}


def test_members_still_waiting_at_the_end_of_a_pass(registry: Registry) -> None:
    # c is gated, so a and b wait for it until the pass ends; x is queued after them and finds both
    # nodes reserved
    objs = [node("n1"), node("n2"), member("a", created=1), member("b", created=2),
            member("c", created=3, gates=["example.com/later"]), pod("x", created=4)]
    result = simulate(objs, config(ENABLE, registry), registry)
    a1, a2 = cycles_of(result, "default/a")
    assert a1.outcome == a2.outcome == "Unschedulable"
    assert a1.message == ('Coscheduling: pod group "default/train" has 1 of 3 members with a node; waiting for 2 '
                          "more (still waiting on Permit at the end of pass 1; kube-scheduler rejects the pod "
                          "after 1m0s)")
    b1 = cycles_of(result, "default/b")[0]
    assert "has 2 of 3 members with a node; waiting for 1 more" in b1.message
    x1 = cycles_of(result, "default/x")[0]
    assert x1.outcome == "Unschedulable" and "2 Insufficient cpu" in x1.message
    assert result.bindings == {}
    assert sorted(result.pending) == ["default/a", "default/b", "default/c", "default/x"]
    # nothing stays reserved once the run is over
    assert all(not ni.pods for ni in result.state.node_infos)


def test_a_group_smaller_than_min_member_never_starts(registry: Registry) -> None:
    objs = [node("n1"), node("n2"), member("a", created=1), member("b", created=2)]
    result = simulate(objs, config(ENABLE, registry), registry, passes=1)
    a = cycles_of(result, "default/a")[0]
    assert a.prefilter_reject is not None and a.prefilter_reject.plugin == "Coscheduling"
    assert a.message.startswith('0/2 nodes are available: pod group "default/train" has 2 pod(s), fewer than '
                                "its min member 3.")


def test_bad_min_member_annotation(registry: Registry) -> None:
    objs = [node("n1"), pod("a", labels={GROUP: "g"}, annotations={MIN: "many"})]
    result = simulate(objs, config(ENABLE, registry), registry, passes=1)
    assert "pod-group.scheduling.example/min-member='many' is not a positive integer" in result.cycles[0].message


def test_pods_without_a_group_are_untouched(registry: Registry) -> None:
    result = simulate([node("n1"), pod("solo")], config(ENABLE, registry), registry)
    assert result.bindings == {"default/solo": "n1"}


def test_a_waiting_member_preempted_by_a_higher_priority_pod(registry: Registry) -> None:
    # FIFO order: a waits on n1 (the only node); h (priority 100) finds n1 reserved and preempts a,
    # which is rejected rather than deleted and is pending again
    objs = [node("n1"), member("a", min_member=2, created=1), pod("h", priority=100, created=2),
            member("b", min_member=2, created=3)]
    result = simulate(objs, config(FIFO_AND_GANG, registry), registry)
    a1 = cycles_of(result, "default/a")[0]
    assert (a1.outcome, a1.message) == ("Unschedulable", "DefaultPreemption: preempted")
    h1, h2 = cycles_of(result, "default/h")
    assert (h1.outcome, h1.nominated_node, h1.victims) == ("Nominated", "n1", ["default/a"])
    assert (h2.outcome, h2.node) == ("Scheduled", "n1")
    assert result.bindings == {"default/h": "n1"}


@pytest.mark.parametrize("args", ["{permitWaitingTimeSeconds: 0}", "{permitWaitingTimeSeconds: x}", "{wait: 3}"])
def test_argument_errors(registry: Registry, args: str) -> None:
    text = ENABLE + f"  pluginConfig:\n  - name: Coscheduling\n    args: {args}\n"
    with pytest.raises(ConfigError) as info:
        config(text, registry)
    assert info.value.field.startswith("profiles[0].pluginConfig[0].args.")
