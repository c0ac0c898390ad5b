"""Preemption victims among pods the simulation itself bound (issue #12).

Upstream's rules, read from kube-scheduler v1.34.1 (``SelectVictimsOnNode``, ``MoreImportantPod``,
``GetPodStartTime``, ``GetEarliestPodStartTime``, ``NodeInfo.RemovePod``):

1. A pod without ``status.startTime`` starts "now" (``time.Now()`` at each comparison). A pod the scheduler
   bound was never started by a kubelet, so at equal priority it is the *least* important: every pod
   with a recorded start time is reprieved before it. (Running pods of a snapshot without a start time
   use their creation time, as the reference admitted them; that is not the case here.)
2. Two such pods both read the clock, the first one asked first, so ``MoreImportantPod`` is true both
   ways; ``sort.Slice`` (insertion sort up to 12 elements) then moves each later one in front of the
   earlier ones: among never-started pods of one priority, the pod added to the node last is reprieved
   first.
3. The reprieve is greedy: a pod goes back when the preemptor still fits, so the order decides which pods
   stay victims when a node has room for only some of them (here: the node's pod count).
4. ``pickOneNodeForPreemption``'s fifth criterion prefers the node whose most important victims started
   latest; a victim that never started counts as now, later than any recorded start.
5. ``NodeInfo.RemovePod`` moves the node's last pod into the removed one's place; that order is the order
   the next preemption gathers its potential victims in.

Each scenario makes the preemptor fail in pass 1 (its required pod affinity names a pod that is still
pending) so that it preempts in pass 2, when the pods bound in pass 1 are on the nodes.
"""

from __future__ import annotations

import copy
from typing import Any

from pysched.framework.config import load_config
from pysched.framework.gosort import go_sort_slice
from pysched.plugins import in_tree_registry
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import Document, build_cluster
from tests.builders import make_node, make_pod, node_info

REGISTRY = in_tree_registry()
CONFIG = load_config(None, REGISTRY)
ZONE = "topology.kubernetes.io/zone"


def _pod(name: str, priority: int, created: str, **kw: Any) -> dict:
    b = make_pod(name).priority(priority)
    if kw.get("cpu"):
        b = b.req(cpu=kw["cpu"])
    if kw.get("node"):
        b = b.node_name(kw["node"])
    if kw.get("selector"):
        b = b.node_selector(kw["selector"])
    d = b.obj()
    d["metadata"]["creationTimestamp"] = created
    if kw.get("labels"):
        d["metadata"]["labels"] = kw["labels"]
    if kw.get("started"):
        d["status"] = {"phase": "Running", "startTime": kw["started"]}
    if kw.get("affinity"):  # required pod affinity to app=<value> anywhere in the zone
        d["spec"]["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": kw["affinity"]}}, "topologyKey": ZONE}]}}
    return d


def _node(name: str, pods: int, cpu: str = "4") -> dict:
    return make_node(name).alloc(cpu=cpu, memory="8Gi", pods=str(pods)).labels(
        {ZONE: "z", "kubernetes.io/hostname": name}).obj()


def _preemptor_and_anchor(node: str) -> list[dict]:
    """The preemptor (priority 1000, pass 1: no pod app=db exists yet) and the pod it needs (created a
    second later, so scheduled right after it in pass 1)."""
    return [_pod("preemptor", 1000, "2025-01-01T00:00:00Z", cpu="1", affinity="db"),
            _pod("db", 1000, "2025-01-01T00:00:01Z", labels={"app": "db"}, selector={"kubernetes.io/hostname": node})]


def _run(objs: list[dict]) -> dict:
    """Both code paths, which must agree; the cycles by (pass, pod)."""
    cluster = build_cluster([(Document("test", i + 1, o), o, "") for i, o in enumerate(objs)])
    out = {}
    for batched in (True, False):
        result = Simulation(copy.deepcopy(cluster), CONFIG, REGISTRY, SimulationOptions(batched=batched)).run()
        out[batched] = {(c.pass_no, c.pod): c for c in result.cycles}
    assert {k: (c.outcome, c.node, c.nominated_node, c.victims) for k, c in out[True].items()} == \
        {k: (c.outcome, c.node, c.nominated_node, c.victims) for k, c in out[False].items()}
    return out[True]


def test_a_pod_bound_by_the_simulation_is_less_important_than_a_started_one() -> None:
    """Rule 1 and 3. n1 holds 3 pods at most. Pass 1 binds db and ``late`` (priority 0, created on Jan 1)
    next to ``early`` (priority 0, running, started on Jan 5). In pass 2 the preemptor needs a pod slot:
    with both priority-0 pods removed it fits; ``early`` has a start time and ``late`` has none, so
    ``early`` is reprieved first and takes the only slot; ``late`` is the victim. (Ordering by creation
    time instead would reprieve ``late`` and evict the pod that was running all along.)"""
    objs = [_node("n1", pods=3), *_preemptor_and_anchor("n1"),
            _pod("early", 0, "2025-01-05T00:00:00Z", node="n1", started="2025-01-05T00:00:00Z"),
            _pod("late", 0, "2025-01-01T00:00:02Z", cpu="1")]
    cycles = _run(objs)
    assert cycles[(1, "default/late")].node == "n1"
    c = cycles[(2, "default/preemptor")]
    assert (c.outcome, c.nominated_node, c.victims) == ("Nominated", "n1", ["default/late"])


def test_pods_that_never_started_are_reprieved_last_bound_first() -> None:
    """Rule 2 and 3. Pass 1 binds db, then ``first`` and ``second`` (both priority 0, no start time) on n1
    (3 pods at most). Sorting [first, second] with a comparison that is true both ways makes insertion sort
    swap them: ``second`` is reprieved first and keeps the slot, ``first`` is the victim."""
    objs = [_node("n1", pods=3), *_preemptor_and_anchor("n1"),
            _pod("first", 0, "2025-01-01T00:00:02Z"), _pod("second", 0, "2025-01-01T00:00:03Z")]
    cycles = _run(objs)
    c = cycles[(2, "default/preemptor")]
    assert (c.outcome, c.nominated_node, c.victims) == ("Nominated", "n1", ["default/first"])


def test_the_node_whose_victim_never_started_wins_the_start_time_criterion() -> None:
    """Rule 4. n1 and n2 each hold 2 pods: one of priority 5000 (not a victim) and one of priority 0:
    ``started`` on n1 (started Jan 5) and ``bound`` on n2 (bound in pass 1, created Jan 1). db fills n3.
    Both candidates tie on PDBs, top priority, priority sum and count; the later start wins, and a pod
    that never started is the latest of all: n2."""
    objs = [_node("n1", pods=2), _node("n2", pods=2), _node("n3", pods=1), *_preemptor_and_anchor("n3"),
            _pod("keep1", 5000, "2025-01-01T00:00:00Z", node="n1", started="2025-01-01T00:00:00Z"),
            _pod("keep2", 5000, "2025-01-01T00:00:00Z", node="n2", started="2025-01-01T00:00:00Z"),
            _pod("started", 0, "2025-01-05T00:00:00Z", node="n1", started="2025-01-05T00:00:00Z"),
            _pod("bound", 0, "2025-01-01T00:00:02Z", selector={"kubernetes.io/hostname": "n2"})]
    cycles = _run(objs)
    assert cycles[(1, "default/bound")].node == "n2"
    c = cycles[(2, "default/preemptor")]
    assert (c.outcome, c.nominated_node, c.victims) == ("Nominated", "n2", ["default/bound"])


def test_a_pod_without_requests_adds_back_nothing_to_the_requested_totals() -> None:
    """What a reprieved pod gives back: its requests (nothing for a pod without any) to ``requested`` —
    the totals Filter compares — and the non-zero defaults (100m cpu, 200Mi) only to
    ``non_zero_requested``, which only scoring reads."""
    ni = node_info(make_node("n").alloc(cpu="2", memory="4Gi"), make_pod("a").req(cpu="1"), make_pod("b"))
    before = (ni.requested.milli_cpu, ni.requested.memory, ni.non_zero_requested.milli_cpu)
    b = ni.pods[1]
    ni.remove_pod(b)
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, 0)
    assert ni.non_zero_requested.milli_cpu == 1000
    ni.add_pod(b)
    assert (ni.requested.milli_cpu, ni.requested.memory, ni.non_zero_requested.milli_cpu) == before == (
        1000, 0, 1100)


def test_removing_a_pod_moves_the_last_one_into_its_place() -> None:
    """Rule 5: upstream's slice removal, not Python's ``list.remove``."""
    ni = node_info(make_node("n"), *(make_pod(n) for n in "abcd"))
    ni.remove_pod(ni.pods[0])
    assert [p.name for p in ni.pods] == ["d", "b", "c"]
    ni.remove_pod(ni.pods[2])
    assert [p.name for p in ni.pods] == ["d", "b"]


def test_go_sort_slice_reproduces_go_permutations() -> None:
    """``sort.Slice`` is not stable: Go 1.21 prints these permutations for 13 and 14 elements, the first
    of them larger than the rest, all others equal (insertion sort keeps 12 or fewer in order)."""
    def run(n: int) -> list[int]:
        xs = [(-1, "x")] + [(i, "test") for i in range(n - 1)]
        go_sort_slice(xs, lambda a, b: a[1] < b[1])
        return [i for i, _ in xs]

    assert run(12) == [*range(11), -1]
    assert run(13) == [5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, -1]
    assert run(14) == [5, 7, 1, 2, 3, 4, 0, 12, 9, 8, 6, 10, 11, -1]


def test_go_sort_slice_sorts() -> None:
    import random
    rng = random.Random(7)
    for _ in range(300):
        xs = [rng.randrange(40) for _ in range(rng.randrange(0, 200))]
        ys = list(xs)
        go_sort_slice(ys, lambda a, b: a < b)
        assert ys == sorted(xs)
