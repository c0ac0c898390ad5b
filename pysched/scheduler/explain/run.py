"""The explain run: the simulation up to and including one pod's last cycle, with that pod traced, and
the what-if computed in the state that cycle starts from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, replace
from typing import Any

from pysched.framework.config import SchedulerConfig
from pysched.framework.registry import Registry
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.scheduler.explain.suggestions import WhatIf, compute_whatif
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.cluster import Cluster


@dataclass(slots=True)
class Explanation:
    pod: str
    cycles: list[CycleTrace]  # every cycle of the pod, traced
    whatif: WhatIf | None  # for the last cycle, when it did not bind the pod
    nodes: int
    gates: list[str] = field(default_factory=list)  # the pod's scheduling gates


class _Reached(BaseException):  # control flow (not an error), never escapes explain_pod
    """The pod's last cycle ran: the rest of the simulation is not needed."""


class _ExplainSimulation(Simulation):
    """The simulation, watching one pod: the what-if is computed in the state its last cycle starts from,
    and the run stops once that cycle's outcome is final."""

    def __init__(self, *args: Any, target: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.target = target
        self.target_cycles: list[CycleTrace] = []
        self.whatif: WhatIf | None = None  # computed before the pod's cycle of the last pass

    def cycle(self, pod: Pod, pass_no: int) -> CycleTrace:
        if pod.key == self.target:
            fwk = self.frameworks[pod.scheduler_name]
            if pass_no >= self.options.passes and fwk.run_pre_enqueue(pod) is None:
                self.whatif = compute_whatif(fwk, self.state, pod)
            tr = super().cycle(pod, pass_no)
            self.target_cycles.append(tr)
        else:
            tr = super().cycle(pod, pass_no)
        if self.finished():
            raise _Reached
        return tr

    def finished(self) -> bool:
        """The pod was bound, or its cycle of the last pass ran; and no Permit wait holds its outcome open."""
        if not self.target_cycles:
            return False
        # a pod waiting on Permit is settled later in the pass, by another pod's cycle or at its end
        return self.target_cycles[-1].is_last(self.options.passes)


def explain_pod(cluster: Cluster, config: SchedulerConfig, registry: Registry, pod_key: str,
                options: SimulationOptions | None = None,
                progress: Callable[[int, int], None] | None = None) -> Explanation:
    """Simulate up to and including ``pod_key``'s last cycle, with that pod traced (``progress`` as for
    ``Simulation.run``)."""
    base = options or SimulationOptions()
    opts = replace(base, trace=True, trace_pods={pod_key}, stop_after=pod_key)
    sim = _ExplainSimulation(cluster, config, registry, opts, target=pod_key)
    try:
        result = sim.run(progress=progress)
        cycles = sim.target_cycles or [c for c in result.cycles if c.pod == pod_key]
    except _Reached:
        cycles = sim.target_cycles
    last = cycles[-1] if cycles else None
    whatif = sim.whatif if last is not None and last.outcome in (Outcome.UNSCHEDULABLE, Outcome.NOMINATED) else None
    pod = next((p for p in cluster.pods if p.key == pod_key), None)
    return Explanation(pod_key, cycles, whatif, len(sim.state.node_infos),
                       list(pod.scheduling_gates) if pod is not None else [])
