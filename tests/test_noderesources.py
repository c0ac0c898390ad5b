"""NodeResourcesFit (filter and the three scoring strategies) and NodeResourcesBalancedAllocation."""

from __future__ import annotations

import pytest

from pysched.framework.cycle_state import CycleState
from pysched.framework.plugin_args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from pysched.framework.status import Code
from pysched.plugins.noderesources import balanced_allocation, fit
from pysched.plugins.noderesources.resource_allocation import (
    balanced_scorer,
    broken_linear,
    pod_request_list,
)
from tests.builders import make_node, make_pod, node_info

GI = 1024**3
MI = 1024**2


def fit_args(kind: str = "LeastAllocated", resources: list[tuple[str, int]] | None = None,
             shape: list[tuple[int, int]] | None = None, ignored: list[str] | None = None,
             groups: list[str] | None = None) -> NodeResourcesFitArgs:
    res = [ResourceSpec(n, w) for n, w in (resources or [("cpu", 1), ("memory", 1)])]
    return NodeResourcesFitArgs(ignored or [], groups or [],
                                ScoringStrategy(kind, res, [UtilizationShapePoint(u, s) for u, s in shape or []]))


def run_filter(plugin: fit.Fit, ni, pod):
    state = CycleState()
    res, st = plugin.pre_filter(state, pod, [ni])
    assert res is None and st is None  # Fit never skips and never narrows nodes
    return plugin.filter(state, pod, ni)


def run_score(plugin, ni, pod) -> int:
    state = CycleState()
    st = plugin.pre_score(state, pod, [ni])
    assert st is None
    score, st = plugin.score(state, pod, ni)
    assert st is None
    return score


# --------------------------------------------------------------------------- Fit filter

NODE = make_node("n").alloc(cpu="4", memory="8Gi", ephemeral_storage="10Gi", pods="110")
U, UU = Code.Unschedulable, Code.UnschedulableAndUnresolvable

FILTER_CASES = [
    # id, node, existing pods, incoming pod, args, expected code (None = fits), reasons
    ("fits", NODE, [make_pod("a").req(cpu="2")], make_pod("p").req(cpu="2", memory="1Gi"), None, None, []),
    ("insufficient-cpu", NODE, [make_pod("a").req(cpu="3")], make_pod("p").req(cpu="2"), None,
     U, ["Insufficient cpu"]),
    ("cpu-over-allocatable-is-unresolvable", NODE, [], make_pod("p").req(cpu="5"), None,
     UU, ["Insufficient cpu"]),
    ("cpu-and-memory-in-order", NODE, [make_pod("a").req(cpu="3", memory="7Gi")],
     make_pod("p").req(memory="2Gi", cpu="2"), None, U, ["Insufficient cpu", "Insufficient memory"]),
    ("one-unresolvable-makes-all-unresolvable", NODE, [make_pod("a").req(cpu="3")],
     make_pod("p").req(cpu="2", memory="9Gi"), None, UU, ["Insufficient cpu", "Insufficient memory"]),
    ("ephemeral-storage", NODE, [make_pod("a").req(ephemeral_storage="8Gi")],
     make_pod("p").req(ephemeral_storage="3Gi"), None, U, ["Insufficient ephemeral-storage"]),
    ("too-many-pods-alone-is-unschedulable", make_node("n").alloc(cpu="4", memory="8Gi", pods="1"),
     [make_pod("a")], make_pod("p"), None, U, ["Too many pods"]),
    ("too-many-pods-first-then-resources", make_node("n").alloc(cpu="4", memory="8Gi", pods="1"),
     [make_pod("a")], make_pod("p").req(cpu="5"), None, UU, ["Too many pods", "Insufficient cpu"]),
    ("zero-request-pod-ignores-full-node", NODE, [make_pod("a").req(cpu="4", memory="8Gi")], make_pod("p"), None,
     None, []),
    ("requested-not-non-zero-on-node", make_node("n").alloc(cpu="1", memory="1Gi"),
     [make_pod(f"a{i}") for i in range(20)], make_pod("p").req(cpu="1"), None, None, []),
    ("extended-missing-on-node", NODE, [], make_pod("p").req({"example.com/gpu": "1"}), None,
     UU, ["Insufficient example.com/gpu"]),
    ("extended-used-up", make_node("n").alloc({"example.com/gpu": "2"}, cpu="4"),
     [make_pod("a").req({"example.com/gpu": "2"})], make_pod("p").req({"example.com/gpu": "1"}), None,
     U, ["Insufficient example.com/gpu"]),
    ("extended-ignored-by-name", NODE, [], make_pod("p").req({"example.com/gpu": "1"}),
     fit_args(ignored=["example.com/gpu"]), None, []),
    ("extended-ignored-by-group", NODE, [], make_pod("p").req({"example.com/gpu": "1", "other.io/fpga": "1"}),
     fit_args(groups=["example.com"]), UU, ["Insufficient other.io/fpga"]),
    ("hugepages-never-ignored", NODE, [], make_pod("p").req({"hugepages-2Mi": "2Mi"}),
     fit_args(ignored=["hugepages-2Mi"], groups=["hugepages-2Mi"]), UU, ["Insufficient hugepages-2Mi"]),
    ("zero-extended-request-skipped", NODE, [], make_pod("p").req({"example.com/gpu": "0"}), None, None, []),
    # containers 1 + sidecar 1 = 2; init step: 3 + sidecar 1 = 4 -> request 4 cpu
    ("sidecar-and-init-containers", NODE, [make_pod("a").req(cpu="500m")],
     make_pod("p").req(cpu="1").init({"cpu": "1"}, sidecar=True).init({"cpu": "3"}), None,
     U, ["Insufficient cpu"]),
    ("init-before-sidecar-does-not-add-it", NODE, [make_pod("a").req(cpu="500m")],
     make_pod("p").req(cpu="1").init({"cpu": "3"}).init({"cpu": "1"}, sidecar=True), None, None, []),
    ("pod-level-requests-override-containers", NODE, [make_pod("a").req(cpu="2500m")],
     make_pod("p").req(cpu="2").req(cpu="2").pod_req(cpu="1"), None, None, []),
    ("pod-level-requests-of-existing-pods", NODE, [make_pod("a").req(cpu="100m").pod_req(cpu="3500m")],
     make_pod("p").req(cpu="1"), None, U, ["Insufficient cpu"]),
    ("overhead-added", NODE, [make_pod("a").req(cpu="2800m")], make_pod("p").req(cpu="1").overhead(cpu="250m"),
     None, U, ["Insufficient cpu"]),
    ("limits-default-requests", NODE, [make_pod("a").req(cpu="3")],
     make_pod("p").container(limits={"cpu": "2"}), None, U, ["Insufficient cpu"]),
    # each container's 0.5m is rounded up to 1m before summing: 2m
    ("sub-milli-rounded-per-container", make_node("n").alloc(cpu="1m", memory="1Gi"), [],
     make_pod("p").req(cpu="0.5m").req(cpu="0.5m"), None, UU, ["Insufficient cpu"]),
    ("sub-milli-fits-exactly", make_node("n").alloc(cpu="2m", memory="1Gi"), [],
     make_pod("p").req(cpu="0.5m").req(cpu="0.5m"), None, None, []),
    # 1.5 bytes -> 2 bytes
    ("sub-byte-memory-rounds-up", make_node("n").alloc(cpu="1", memory="1"), [],
     make_pod("p").req(memory="1.5"), None, UU, ["Insufficient memory"]),
]


@pytest.mark.parametrize(("node", "existing", "pod", "args", "code", "reasons"),
                         [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES])
def test_fit_filter(node, existing, pod, args, code, reasons) -> None:
    plugin = fit.factory(args, None)
    st = run_filter(plugin, node_info(node, *existing), pod.pod())
    if code is None:
        assert st is None
    else:
        assert st is not None and st.code == code
        assert st.reasons == reasons


def test_fit_filter_without_prefilter_state_is_an_error() -> None:
    plugin = fit.factory(None, None)
    st = plugin.filter(CycleState(), make_pod("p").pod(), node_info(NODE))
    assert st is not None and st.code == Code.Error
    assert st.message() == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


def test_fit_default_args_and_decode() -> None:
    plugin = fit.factory(None, None)
    assert plugin.scorer.resources == ["cpu", "memory"] and plugin.scorer.weights == [1, 1]
    decoded = fit.decode_args({"scoringStrategy": {"type": "MostAllocated"}})
    assert decoded.scoring_strategy.type == "MostAllocated"


# --------------------------------------------------------------------------- Fit scoring

# Reference worked example: 4000m / 8Gi, NonZeroRequested 1000m / 2Gi, incoming pod without requests.
EXAMPLE_NODE = make_node("n").alloc(cpu="4", memory="8Gi")
EXAMPLE_EXISTING = [make_pod("a").req(cpu="1", memory="2Gi")]

SCORE_CASES = [
    # id, args, node, existing, pod, expected score
    ("least-worked-example-72", None, EXAMPLE_NODE, EXAMPLE_EXISTING, make_pod("p"), 72),
    ("least-non-zero-defaults-on-node", None, EXAMPLE_NODE, [make_pod("a"), make_pod("b")],
     make_pod("p").req(cpu="1", memory="1Gi"),
     # cpu (4000-1200)*100//4000 = 70; memory (8Gi - 1Gi - 400Mi)*100//8Gi = 82 -> 76
     76),
    ("least-ignores-incoming-pod-level", None, EXAMPLE_NODE, EXAMPLE_EXISTING,
     make_pod("p").pod_req(cpu="3", memory="6Gi"), 72),
    ("least-defaults-per-container-incl-init", None, EXAMPLE_NODE, [],
     # containers 2 x 100m, init 100m -> 200m; memory 2 x 200Mi = 400Mi
     make_pod("p").req().req().init(), (3800 * 100 // 4000 + (8 * GI - 400 * MI) * 100 // (8 * GI)) // 2),
    ("least-sidecar-defaults-add", None, EXAMPLE_NODE, [],
     # container 100m + sidecar 100m = 200m
     make_pod("p").req().init(sidecar=True), (3800 * 100 // 4000 + (8 * GI - 400 * MI) * 100 // (8 * GI)) // 2),
    ("least-overhead-included", None, make_node("n").alloc(cpu="1", memory="1Gi"), [],
     make_pod("p").req(cpu="400m", memory="512Mi").overhead(cpu="100m"), (50 + 50) // 2),
    ("least-over-capacity-is-zero", None, make_node("n").alloc(cpu="1", memory="1Gi"), [],
     make_pod("p").req(cpu="2", memory="512Mi"), (0 + 50) // 2),
    ("least-weighted", fit_args(resources=[("cpu", 1), ("memory", 3)]), EXAMPLE_NODE, [],
     make_pod("p").req(cpu="2", memory="2Gi"), (50 * 1 + 75 * 3) // 4),
    ("least-extended-not-requested-ignored", fit_args(resources=[("cpu", 1), ("memory", 1), ("example.com/gpu", 5)]),
     make_node("n").alloc({"example.com/gpu": "4"}, cpu="4", memory="8Gi"), [],
     make_pod("p").req(cpu="2", memory="4Gi"), 50),
    ("least-extended-requested", fit_args(resources=[("cpu", 1), ("memory", 1), ("example.com/gpu", 2)]),
     make_node("n").alloc({"example.com/gpu": "4"}, cpu="4", memory="8Gi"), [make_pod("a").req({"example.com/gpu": "1"})],
     # the existing pod counts 100m / 200Mi in NonZeroRequested
     make_pod("p").req({"example.com/gpu": "1"}, cpu="2", memory="4Gi"),
     ((4000 - 2100) * 100 // 4000 + (4 * GI - 200 * MI) * 100 // (8 * GI) + 50 * 2) // 4),
    ("least-extended-missing-on-node-ignored", fit_args(resources=[("cpu", 1), ("memory", 1), ("example.com/gpu", 2)]),
     EXAMPLE_NODE, [], make_pod("p").req({"example.com/gpu": "1"}, cpu="2", memory="4Gi"), 50),
    ("least-ephemeral-uses-real-requests", fit_args(resources=[("ephemeral-storage", 1)]),
     make_node("n").alloc(cpu="4", memory="8Gi", ephemeral_storage="100"), [make_pod("a")],
     make_pod("p").req(ephemeral_storage="30"), 70),
    ("least-no-allocatable-anywhere", fit_args(resources=[("example.com/gpu", 1)]), EXAMPLE_NODE, [],
     make_pod("p").req({"example.com/gpu": "1"}), 0),
    ("most-allocated", fit_args("MostAllocated"), EXAMPLE_NODE, EXAMPLE_EXISTING,
     make_pod("p").req(cpu="1", memory="2Gi"), 50),
    ("most-allocated-capped", fit_args("MostAllocated", resources=[("cpu", 2), ("memory", 1)]), EXAMPLE_NODE,
     EXAMPLE_EXISTING, make_pod("p").req(cpu="5", memory="2Gi"), (100 * 2 + 50) // 3),
    ("most-allocated-defaults", fit_args("MostAllocated"), EXAMPLE_NODE, EXAMPLE_EXISTING, make_pod("p"),
     (1100 * 100 // 4000 + (2 * GI + 200 * MI) * 100 // (8 * GI)) // 2),
    ("rtcr-rising", fit_args("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]), EXAMPLE_NODE,
     EXAMPLE_EXISTING, make_pod("p").req(cpu="1", memory="2Gi"), 50),
    # cpu utilisation 0 scores 0 and is left out of both sums: (60*1)/1, not 60/2
    ("rtcr-zero-scores-not-counted", fit_args("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]),
     make_node("n").alloc(cpu="100000", memory="1000"), [], make_pod("p").req(cpu="1m", memory="600"), 60),
    # cpu 50, memory 51 -> 50.5 rounds half away from zero to 51
    ("rtcr-round-half-away", fit_args("RequestedToCapacityRatio", shape=[(0, 0), (100, 10)]),
     make_node("n").alloc(cpu="1", memory="100"), [], make_pod("p").req(cpu="500m", memory="51"), 51),
    # falling segment (60,100)->(80,30) at utilisation 65: 100 + (-70*5)/20 = 100 - 17 (Go truncation)
    ("rtcr-falling-shape-truncates", fit_args("RequestedToCapacityRatio", resources=[("cpu", 3), ("memory", 1)],
                                              shape=[(0, 2), (30, 9), (60, 10), (80, 3), (100, 0)]),
     make_node("n").alloc(cpu="1", memory="100"), [], make_pod("p").req(cpu="650m", memory="65"), 83),
    ("rtcr-over-capacity-uses-100", fit_args("RequestedToCapacityRatio", shape=[(0, 10), (100, 3)]),
     make_node("n").alloc(cpu="1", memory="100"), [], make_pod("p").req(cpu="2", memory="200"), 30),
    ("rtcr-single-point", fit_args("RequestedToCapacityRatio", resources=[("cpu", 1), ("memory", 2)],
                                   shape=[(50, 7)]),
     make_node("n").alloc(cpu="1", memory="100"), [], make_pod("p").req(cpu="900m", memory="10"), 70),
]


@pytest.mark.parametrize(("args", "node", "existing", "pod", "expected"), [c[1:] for c in SCORE_CASES],
                         ids=[c[0] for c in SCORE_CASES])
def test_fit_score(args, node, existing, pod, expected) -> None:
    plugin = fit.factory(args, None)
    assert run_score(plugin, node_info(node, *existing), pod.pod()) == expected


def test_fit_score_without_prescore_state_computes_requests() -> None:
    plugin = fit.factory(None, None)
    ni = node_info(EXAMPLE_NODE, *EXAMPLE_EXISTING)
    assert plugin.score(CycleState(), make_pod("p").pod(), ni) == (72, None)


@pytest.mark.parametrize(("shape", "points"), [
    ([(0, 0), (100, 100)], {0: 0, 50: 50, 100: 100, 150: 100}),
    ([(0, 100), (100, 0)], {0: 100, 33: 67, 99: 1, 100: 0}),
    ([(10, 20), (30, 90)], {0: 20, 10: 20, 11: 23, 20: 55, 31: 90}),
    # negative numerators truncate toward zero: 100 + (-70*5)//20 would give 82 with floor division
    ([(60, 100), (80, 30)], {65: 83, 61: 97, 79: 34}),
], ids=["rising", "falling", "offset", "falling-truncation"])
def test_broken_linear(shape, points) -> None:
    f = broken_linear(shape)
    assert {p: f(p) for p in points} == points


def test_pod_request_list_units() -> None:
    pod = make_pod("p").req(cpu="0.5m", memory="1.5").req(cpu="0.5m").pod()
    # sub-milli cpu rounds to 1m per container; memory 1.5 bytes -> 2; second container gets 200Mi default
    assert pod_request_list(pod, ["cpu", "memory"], use_requested=True, pod_level=True) == [2, 2]
    assert pod_request_list(pod, ["cpu", "memory"], use_requested=False, pod_level=False) == [2, 2 + 200 * MI]


# --------------------------------------------------------------------------- BalancedAllocation

def balanced(resources: list[str] | None = None) -> balanced_allocation.BalancedAllocation:
    args = None if resources is None else NodeResourcesBalancedAllocationArgs([ResourceSpec(r, 1) for r in resources])
    return balanced_allocation.factory(args, None)


BALANCED_CASES = [
    # reference example: fractions 0.5 and 0.375 -> std 0.0625 -> int(93.75)
    ("worked-example-93", None, EXAMPLE_NODE, EXAMPLE_EXISTING, make_pod("p").req(cpu="1", memory="1Gi"), 93),
    ("uses-real-requests-not-defaults", None, EXAMPLE_NODE, [make_pod("a"), make_pod("b")],
     make_pod("p").req(cpu="2", memory="2Gi"), int((1 - abs((0.5 - 0.25) / 2)) * 100)),
    ("fraction-capped-at-one", None, EXAMPLE_NODE, [], make_pod("p").req(cpu="8", memory="4Gi"), 75),
    ("honours-incoming-pod-level", None, EXAMPLE_NODE, [],
     make_pod("p").req(cpu="3", memory="1Gi").pod_req(cpu="2", memory="4Gi"), 100),
    ("overhead-included", None, EXAMPLE_NODE, [], make_pod("p").req(cpu="1", memory="4Gi").overhead(cpu="1"), 100),
    ("three-resources-std-dev", ["cpu", "memory", "nvidia.com/gpu"],
     make_node("n").alloc({"nvidia.com/gpu": "4"}, cpu="4", memory="8Gi"), [],
     make_pod("p").req({"nvidia.com/gpu": "1"}, cpu="1", memory="4Gi"), 88),
    ("unrequested-scalar-left-out", ["cpu", "memory", "nvidia.com/gpu"],
     make_node("n").alloc({"nvidia.com/gpu": "4"}, cpu="4", memory="8Gi"), [],
     make_pod("p").req(cpu="1", memory="4Gi"), int((1 - 0.125) * 100)),
    ("single-resource-is-balanced", ["cpu"], EXAMPLE_NODE, [], make_pod("p").req(cpu="1"), 100),
]


@pytest.mark.parametrize(("resources", "node", "existing", "pod", "expected"), [c[1:] for c in BALANCED_CASES],
                         ids=[c[0] for c in BALANCED_CASES])
def test_balanced_score(resources, node, existing, pod, expected) -> None:
    assert run_score(balanced(resources), node_info(node, *existing), pod.pod()) == expected


@pytest.mark.parametrize("pod", [make_pod("p"), make_pod("p").req(memory="0"),
                                 make_pod("p").req({"example.com/gpu": "1"})],
                         ids=["no-requests", "zero-requests", "only-unconfigured-resource"])
def test_balanced_skips_best_effort(pod) -> None:
    plugin = balanced()
    state = CycleState()
    st = plugin.pre_score(state, pod.pod(), [])
    assert st is not None and st.code == Code.Skip
    # Score without PreScore state falls back to 0 for a best-effort pod
    assert plugin.score(CycleState(), pod.pod(), node_info(EXAMPLE_NODE)) == (0, None)


def test_balanced_scorer_population_std_dev() -> None:
    # fractions 0.25, 0.5, 0.25: mean 1/3, variance 1/72
    assert balanced_scorer([1, 4, 1], [4, 8, 4]) == 88
    assert balanced_scorer([0, 0], [0, 0]) == 100


@pytest.mark.parametrize("q", [1, 250, 2 ** 31, 2 ** 46 + 3, (1 << 62) - 1], ids=["one", "millicores", "2^31", "2^46+3", "largest"])
def test_fit_request_scalars_are_kept_read_only_int64(q: int) -> None:
    """NodeResourcesFit's batched verdict compares the rows with ``_request(q)``: a read-only 0-d int64
    array of exactly ``q``, the same one for the same value; the comparison is the one with ``q``."""
    import numpy as np

    from pysched.plugins.noderesources import fit

    arr = fit._request(q)
    assert arr.shape == () and arr.dtype == np.int64 and int(arr) == q
    assert not arr.flags.writeable and fit._request(q) is arr
    free = np.array([q - 1, q, q + 1, -5], dtype=np.int64)
    assert (free >= arr).tolist() == (free >= q).tolist() == [False, True, True, False]
