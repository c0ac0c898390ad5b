"""The simulation: every pending pod gets one cycle (pass 1), pods still pending get one more (pass 2)."""

from __future__ import annotations

import functools
import gc
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import field

from pysched import K8S_VERSION
from pysched.errors import InputError, PyschedError
from pysched.framework.config import SchedulerConfig
from pysched.framework.extender import (
    build_extenders,
    failure_warnings,
    ignored_extended_resources,
    with_ignored_resources,
)
from pysched.framework.interface import Handle, QueuedPodInfo
from pysched.framework.registry import Registry
from pysched.framework.runtime import Framework
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.model.timeutil import parse_time
from pysched.plugins.queuesort import sort_key_of
from pysched.scheduler.cycle import CycleOptions, Scheduler, WaitingPods
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.cluster import Cluster, ClusterState
from pysched.snapshot.loader import load_froze

NOTES = [
    "host tie-break: lexicographically smallest node name among max total score "
    "(--tie-break random picks among them with --seed; upstream samples at random)",
    "filter: nodes evaluated sequentially from the rotating start index",
    "preemption: victims deleted at once; candidate offset 0; ties between candidates go to the smallest name",
]
NOTES_ALL_NODES = [NOTES[0], "filter: every node evaluated (--evaluate-all-nodes)", *NOTES[2:]]


@dataclass
class SimulationOptions:
    tie_break: str = "name"
    seed: int = 0
    trace: bool = False
    trace_pods: set[str] | None = None  # pods to trace (None: all, when trace is on)
    stop_after: str | None = None  # pod key: stop once this pod's last cycle ran
    passes: int = 2
    fail_fast: bool = False  # stop the run (exit 1) at the first cycle that ends in an Error
    batched: bool = True  # False: every plugin on its per-node reference path (same decisions, slower)
    evaluate_all_nodes: bool = False  # True: every node is filtered, whatever percentageOfNodesToScore says


@dataclass
class SimulationResult:
    cycles: list[CycleTrace]
    bindings: dict[str, str]
    pending: list[str]
    not_simulated: list[tuple[str, str]]
    ignored_pods: list[tuple[str, str]]
    nodes: int
    profiles: list[str]
    cluster: Cluster
    state: ClusterState
    options: SimulationOptions
    warnings: list[str] = field(default_factory=list)
    not_created: list[tuple[str, str]] = field(default_factory=list)  # OrderedReady ordinals withheld

    def to_dict(self) -> dict:
        trace = self.options.trace
        cycles = []
        owners = self.cluster.pod_workloads
        for c in self.cycles:
            traced = trace and (self.options.trace_pods is None or c.pod in self.options.trace_pods)
            d = c.to_dict(traced)
            if c.pod in owners:
                d["workload"] = owners[c.pod]
            cycles.append(d)
        out = {
            "k8s_version": K8S_VERSION,
            "nodes": self.nodes,
            "profiles": self.profiles,
            "cycles": cycles,
            "bindings": dict(self.bindings),
            "pending": list(self.pending),
            "not_simulated": [{"pod": p, "reason": r} for p, r in self.not_simulated],
            "rejected_pods": [{"pod": p, "reason": r} for p, r in self.cluster.rejected_pods],
            "ignored_kinds": list(self.cluster.ignored_kinds),
            "warnings": list(self.warnings),
            "notes": list(NOTES_ALL_NODES if self.options.evaluate_all_nodes else NOTES),
        }
        exp = self.cluster.expansion
        if exp is not None:
            out.update(workload_sections(self, exp))
        return out


GEN0_DURING_RUN = 100_000


@contextmanager
def collections_spaced() -> Iterator[None]:
    """The cyclic garbage collector's first generation enlarged while pods are scheduled, then, after a
    large load froze the cluster (``snapshot.loader.collector_paused``), what the run built frozen too.

    Cycles make next to no cyclic garbage (18 objects in the 10,000 cycles of the basic perf snapshot),
    but the traces and statuses they keep trigger a collection every 700 allocations, and the older
    generations are walked again and again (about 0.06 s CPU on that snapshot), then once more while
    the output is built (about 0.08 s). Garbage cycles are still collected, every 100,000 allocations;
    frozen ones only when the next load unfreezes. Thresholds set by the caller are left alone."""
    old = gc.get_threshold()
    if old[0] >= GEN0_DURING_RUN or not gc.isenabled():
        yield
        return
    gc.set_threshold(GEN0_DURING_RUN, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
    if gc.get_freeze_count() and load_froze():  # (not after the command line's freeze of its imports alone)
        gc.freeze()


def unsupported_reason(pod: Pod) -> str | None:
    """Pods whose plugins are not simulated yet are reported, never silently placed (none left: pods with
    resource claims are simulated by DynamicResources)."""
    return None


class Simulation:
    def __init__(self, cluster: Cluster, config: SchedulerConfig, registry: Registry,
                 options: SimulationOptions | None = None) -> None:
        self.cluster = cluster
        self.config = config
        self.options = options or SimulationOptions()
        if self.options.tie_break not in ("name", "random"):
            raise InputError(f"--tie-break must be 'name' or 'random', got {self.options.tie_break!r}")
        self.rng = random.Random(self.options.seed)
        self.state = ClusterState(cluster)
        self.extenders = build_extenders(config.extenders, pod_view=self.state.current_pod)
        ignored = ignored_extended_resources(self.extenders)
        self.waiting = WaitingPods()
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            handle = Handle(self.state, profile.scheduler_name, batched=self.options.batched,
                            extenders=self.extenders, waiting=self.waiting,
                            preemption_rng=self.rng if self.options.tie_break == "random" else None)
            self.frameworks[profile.scheduler_name] = Framework(with_ignored_resources(profile, ignored),
                                                                registry, handle)
        self.scheduler = Scheduler(self.state, CycleOptions(
            tie_break=self.options.tie_break, rng=self.rng,
            global_percentage=config.percentage_of_nodes_to_score,
            evaluate_all_nodes=self.options.evaluate_all_nodes),
            extenders=self.extenders, waiting=self.waiting)

    def _queue(self) -> tuple[list[Pod], list[tuple[str, str]], list[tuple[str, str]]]:
        pending, not_simulated, ignored = [], [], []
        for pod in self.cluster.pods:
            if pod.node_name:
                continue
            if pod.scheduler_name not in self.frameworks:
                ignored.append((pod.key, f"schedulerName {pod.scheduler_name!r} has no profile"))
                continue
            reason = unsupported_reason(pod)
            if reason:
                not_simulated.append((pod.key, reason))
                continue
            pending.append(pod)
        first = self.frameworks[self.config.profiles[0].scheduler_name]
        sort_plugin = first.queue_sort[0] if first.queue_sort else None
        infos = [QueuedPodInfo(p, parse_time(p.meta.creation) or 0.0) for p in pending]
        key_of = sort_key_of(sort_plugin)
        if key_of is not None:  # the same order as ``less`` then the input order, without a comparator
            infos.sort(key=lambda i: (*key_of(i), i.pod.index))
        elif sort_plugin is not None:
            def cmp(a: QueuedPodInfo, b: QueuedPodInfo) -> int:
                if sort_plugin.less(a, b):
                    return -1
                if sort_plugin.less(b, a):
                    return 1
                return a.pod.index - b.pod.index
            try:
                infos.sort(key=functools.cmp_to_key(cmp))
            except Exception as exc:
                raise PyschedError(f"plugin {sort_plugin.name} raised in QueueSort: {type(exc).__name__}: {exc}"
                                   ) from exc
        return [i.pod for i in infos], not_simulated, ignored

    def run(self, progress: Callable[[int, int], None] | None = None) -> SimulationResult:
        with collections_spaced():
            return self._run(progress)

    def _run(self, progress: Callable[[int, int], None] | None) -> SimulationResult:
        queue, not_simulated, ignored = self._queue()
        cycles: list[CycleTrace] = []
        bindings: dict[str, str] = {}
        remaining = queue
        total = len(queue)
        done = 0
        stop = self.options.stop_after
        stopped = False
        gates = self.cluster.ordered_gates
        bound_at_start = {p.key for p in self.cluster.pods if p.node_name} if gates else set()
        scheduled_first: set[str] = set()  # pods whose pass-1 cycle bound them (OrderedReady reads it)
        not_created: list[tuple[str, str]] = []
        withheld: set[str] = set()
        scheduled = Outcome.SCHEDULED  # (read once: an enum member read off its class costs ~1,000 instructions)
        for pass_no in range(1, self.options.passes + 1):
            this_pass: list[tuple[Pod, CycleTrace]] = []
            for pod in remaining:
                if gates and pod.key in gates:
                    if pass_no == 1:
                        waiting = [k for k in gates[pod.key] if k not in bound_at_start and k not in scheduled_first]
                        if waiting:
                            withheld.add(pod.key)
                            not_created.append((pod.key, f"OrderedReady: waits for {waiting[0]} to be running "
                                                          f"and ready"))
                    if pod.key in withheld:
                        continue
                tr = self.cycle(pod, pass_no)
                cycles.append(tr)
                this_pass.append((pod, tr))
                if pass_no == 1 and gates and tr.outcome == "Scheduled":
                    scheduled_first.add(pod.key)
                done += 1
                if progress is not None:
                    progress(done, total)
                if self.options.fail_fast:
                    self._fail_fast([tr, *self.scheduler.settled])
                if stop is not None and pod.key == stop and tr.is_last(self.options.passes):
                    stopped = True  # the pod's last cycle ran: nothing after it matters to the caller
                    break
            # Pods still waiting on Permit are rejected now; every cycle of the pass is final after this.
            self.scheduler.end_pass(pass_no)
            still = []
            for pod, tr in this_pass:
                if tr.outcome is scheduled:
                    bindings[pod.key] = tr.node  # type: ignore[assignment]
                else:
                    still.append(pod)
            remaining = [p for p in still if p.key not in withheld]
            if stopped or (stop is not None and stop in bindings):
                break
            if pass_no == 1:
                total += len(remaining)
        pending = sorted(p.key for p in remaining)
        warnings = list(self.cluster.warnings) + failure_warnings(self.extenders)
        return SimulationResult(cycles, bindings, pending, not_simulated, ignored, len(self.state.node_infos),
                                [p.scheduler_name for p in self.config.profiles], self.cluster, self.state,
                                self.options, warnings, not_created)

    @staticmethod
    def _fail_fast(traces: list[CycleTrace]) -> None:
        """--fail-fast: the first cycle that ended in an Error stops the run (the cycle just run, and the
        cycles of waiting pods it let bind)."""
        for tr in traces:
            if tr.outcome is Outcome.ERROR:
                raise PyschedError(f"--fail-fast: the cycle of pod {tr.pod} (pass {tr.pass_no}) ended in an "
                                   f"error: {tr.error or tr.message or 'no message'}")

    def cycle(self, pod: Pod, pass_no: int) -> CycleTrace:
        fwk = self.frameworks[pod.scheduler_name]
        traced = self.options.trace and (self.options.trace_pods is None or pod.key in self.options.trace_pods)
        st = fwk.run_pre_enqueue(pod)
        if st is not None:
            tr = CycleTrace(pass_no, pod.key, pod.priority, profile=fwk.profile_name)
            tr.outcome = Outcome.GATED if st.is_rejected() else Outcome.ERROR
            tr.preenqueue_reject = st
            if tr.outcome is Outcome.ERROR:
                tr.error = st.message()
            return tr
        return self.scheduler.schedule_one(fwk, pod, pass_no, traced)


def workload_sections(result: SimulationResult, exp: object) -> dict:
    """``workloads``, ``edits``, ``not_created`` and ``now`` of -o json: per workload what its controller
    created and where those pods went (counts are for people; ``deleted`` is compared by the conformance)."""
    from pysched.controllers.engine import Expansion
    assert isinstance(exp, Expansion)
    last: dict[str, CycleTrace] = {}
    for c in result.cycles:
        last[c.pod] = c
    withheld = dict(result.not_created)
    workloads: dict[str, dict] = {}
    for key in sorted(exp.workloads):
        rep = exp.workloads[key]
        created = [p for p in rep.created if p not in withheld]
        scheduled = [p for p in created if p in result.bindings]
        pending = [p for p in created if p not in result.bindings]
        reasons: dict[str, int] = {}
        for p in pending:
            lc = last.get(p)
            msg = str(lc.message or lc.outcome) if lc is not None else "not simulated"
            reasons[msg] = reasons.get(msg, 0) + 1
        entry: dict = {"desired": rep.desired, "existing": rep.existing, "created": len(created),
                       "scheduled": len(scheduled), "pending": len(pending),
                       "deleted": sorted(rep.deleted)}
        if reasons:
            entry["reason"] = max(sorted(reasons), key=lambda m: reasons[m])
        nc = [{"pod": p, "reason": withheld[p]} for p in rep.created if p in withheld]
        if nc:
            entry["not_created"] = nc
        if rep.rejected:
            entry["rejected"] = [{"pod": n, "reason": r} for n, r in rep.rejected]
        if rep.note:
            entry["note"] = rep.note
        workloads[key] = entry
    return {"now": exp.now, "workloads": workloads, "edits": [dict(e) for e in exp.edits],
            "not_created": [{"pod": p, "reason": r} for p, r in result.not_created]}
