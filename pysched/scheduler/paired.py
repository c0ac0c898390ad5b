"""Two simulations compared (``pysched diff``): which pods end differently, and the pair of runs that
traces them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from pysched.framework.config import SchedulerConfig
from pysched.framework.registry import Registry
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.scheduler.trace import Outcome
from pysched.snapshot.cluster import Cluster

# Tracing a pod costs one Filter run per node (its filter matrix) and keeps that matrix: the score margins
# are computed for as many pods as this many node evaluations allow. Below it (pending pods x nodes) both
# simulations trace every pod at once; above it they run untraced, and then again with only the pods that
# differ traced (the first ones by name, up to the budget).
TRACE_ALL_LIMIT = 200_000
MARGIN_BUDGET = 200_000

Progress = Callable[[int, int], None]


@contextlib.contextmanager
def _no_progress() -> Iterator[Progress | None]:
    yield None


def final_placements(result: SimulationResult) -> dict[str, tuple[str, str | None]]:
    """Each simulated pod's last outcome and node (the nominated node for Nominated)."""
    out: dict[str, tuple[str, str | None]] = {}
    for c in result.cycles:
        node = c.node if c.outcome is Outcome.SCHEDULED else c.nominated_node if c.outcome is Outcome.NOMINATED \
            else None
        out[c.pod] = (c.outcome or "", node)
    return out


def differing_pods(a: SimulationResult, b: SimulationResult) -> list[str]:
    """Simulated pods whose last outcome or node differs between the two runs, by name."""
    pa, pb = final_placements(a), final_placements(b)
    return [pod for pod in sorted(set(pa) | set(pb)) if pa.get(pod) != pb.get(pod)]


def simulate_pair(cluster_a: Cluster, cfg_a: SchedulerConfig, cluster_b: Cluster, cfg_b: SchedulerConfig,
                  registry: Registry, tie_break: str = "name", seed: int = 0,
                  progress: Callable[[], AbstractContextManager[Progress | None]] = _no_progress,
                  evaluate_all_nodes: bool = False) -> tuple[SimulationResult, SimulationResult]:
    """Both simulations (a simulation never changes the loaded snapshot: both may share one).

    Small clusters are traced in full; on large ones the pods placed differently are simulated again with
    only them traced, which gives the same decisions plus their scores. ``progress`` opens a progress
    callback for each run."""

    def simulate(cluster: Cluster, cfg: SchedulerConfig, trace: bool, pods: set[str] | None) -> SimulationResult:
        opts = SimulationOptions(tie_break=tie_break, seed=seed, trace=trace, trace_pods=pods,
                                 evaluate_all_nodes=evaluate_all_nodes)
        with progress() as bar:
            return Simulation(cluster, cfg, registry, opts).run(progress=bar)

    def size(cluster: Cluster) -> int:
        return sum(1 for p in cluster.pods if not p.node_name) * max(len(cluster.nodes), 1)

    small = max(size(cluster_a), size(cluster_b)) <= TRACE_ALL_LIMIT
    ra = simulate(cluster_a, cfg_a, small, None)
    rb = simulate(cluster_b, cfg_b, small, None)
    if not small:
        changed = differing_pods(ra, rb)
        nodes = max(len(cluster_a.nodes), len(cluster_b.nodes), 1)
        traced = set(changed[:max(MARGIN_BUDGET // nodes, 1)])
        if traced:
            ra = simulate(cluster_a, cfg_a, True, traced)
            rb = simulate(cluster_b, cfg_b, True, traced)
    return ra, rb
