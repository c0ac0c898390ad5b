"""DefaultPreemption: when no node fits, find pods of lower priority whose eviction would make room
(upstream ``defaultpreemption`` + ``framework/preemption``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from dataclasses import field
from typing import Any

from pysched.framework.cycle_state import CycleState
from pysched.framework.extender import Victims, call_extenders_for_preemption
from pysched.framework.gosort import go_sort_slice
from pysched.framework.interface import (
    Handle,
    NodeToStatus,
    PostFilterPlugin,
    PostFilterResult,
    PreEnqueuePlugin,
)
from pysched.framework.plugin_args import DefaultPreemptionArgs
from pysched.framework.runtime import filters_with
from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod, PodDisruptionBudget
from pysched.model.timeutil import NOW, parse_time
from pysched.plugins.helper import decode_plugin_args
from pysched.snapshot.nodeinfo import NodeInfo

NAME = "DefaultPreemption"
INT32_OFFSET = 2**31

# Filter plugins that pass at least as easily on a node with fewer pods (they read the node and its pods,
# nothing RemovePod changes); when one passed with every pod in place it passes once the victims are gone.
PASS_WITHOUT_PODS = frozenset({"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                               "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                               "VolumeZone"})
# Plugins whose RemovePod and Filter read the node object (labels, taints), never the pods on it.
NODE_OBJECT_ONLY = frozenset({"PodTopologySpread", "InterPodAffinity"})

RemovalCheck = Callable[[list[Pod], NodeInfo], bool]  # see PreFilterPlugin.removal_check


@dataclass(slots=True)
class _LowerPods:
    """A node's pods as preemption asks of them, valid while the node has ``generation``: the lowest
    priority among them, and per preemptor priority asked so far, the pods below it in the node's order."""

    generation: int
    lowest: float
    below: dict[int, list[Pod]]


@dataclass(slots=True)
class Candidate:
    node: str
    victims: list[Pod]
    num_pdb_violations: int


@dataclass(slots=True)
class FilterSplit:
    """This cycle's Filter plugins (PreFilter-skipped ones left out) as dry runs may use them: the first
    ``head`` only pass more easily once pods leave a node, the rest read nothing of a node but its object."""

    active: list[tuple[str, Any]]  # (name, filter) in Filter order
    head: int
    position: dict[str, int]  # name -> index in ``active``
    # no PreFilter plugin with AddPod/RemovePod is active: adding or removing pods leaves the state as it is
    fixed_state: bool = False


@dataclass(slots=True)
class PreemptionDetails:
    """What the dry run saw, for traces and explain."""

    potential_nodes: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    node_statuses: dict[str, Status] = field(default_factory=dict)
    chosen: str = ""
    tied: list[str] = field(default_factory=list)
    bound_here: frozenset[str] = frozenset()  # the victims the simulation had bound (no start time)


def start_time(pod: Pod, bound_here: Collection[str] = ()) -> float:
    """Upstream ``GetPodStartTime``: ``status.startTime``, else "now" (later than any recorded time).
    Running pods of the snapshot without one use their creation time, as the reference admitted them;
    pods the simulation bound (``bound_here``) never started, so they count as now."""
    if pod.start_time:
        t = parse_time(pod.start_time)
        if t is not None:
            return t
    if pod.key in bound_here:
        return NOW
    t = parse_time(pod.meta.creation)
    return t if t is not None else NOW


# Upstream pickOneNodeForPreemption's criteria, in order: the candidate with the highest value wins, the
# next criterion breaks a tie. One definition for the plugin and for explain's reasoning.
CANDIDATE_CRITERIA = (
    "fewest PDB violations",
    "lowest priority of the most important victim",
    "smallest sum of victim priorities",
    "fewest victims",
    "latest start of the most important victims",
)


def candidate_key(c: Candidate, bound_here: Collection[str] = ()) -> tuple[float, ...]:
    """A candidate's value under each of ``CANDIDATE_CRITERIA`` (higher is better); ``bound_here``: the pods
    the simulation bound, which never started."""
    top = c.victims[0].priority if c.victims else 0
    earliest = earliest_start_of_top(c.victims, bound_here) if c.victims else NOW
    return (-c.num_pdb_violations, -top, -sum(v.priority + INT32_OFFSET for v in c.victims), -len(c.victims),
            earliest)


def more_important(a: Pod, b: Pod, bound_here: Collection[str] = ()) -> bool:
    """Upstream ``MoreImportantPod`` as Go evaluates it: higher priority, then the earlier start time.
    Two pods without a start time each read the clock, ``a`` first, so ``a`` looks older: the relation
    is true both ways, and only the sort's exact steps (``go_sort_slice``) decide their order."""
    if a.priority != b.priority:
        return a.priority > b.priority
    ta, tb = start_time(a, bound_here), start_time(b, bound_here)
    if ta == NOW and tb == NOW:
        return True
    return ta < tb


def sort_by_importance(pods: list[Pod], bound_here: Collection[str] = ()) -> list[Pod]:
    """Upstream ``sort.Slice(pods, MoreImportantPod)``: most important first, in Go's exact permutation."""
    out = list(pods)
    go_sort_slice(out, lambda a, b: more_important(a, b, bound_here))
    return out


def earliest_start_of_top(victims: list[Pod], bound_here: Collection[str] = ()) -> float:
    """Upstream ``GetEarliestPodStartTime``: the earliest start among the highest-priority victims."""
    top = victims[0].priority
    earliest = start_time(victims[0], bound_here)
    for v in victims:
        if v.priority == top:
            earliest = min(earliest, start_time(v, bound_here))
        elif v.priority > top:
            top = v.priority
            earliest = start_time(v, bound_here)
    return earliest


def no_victims_status() -> Status:
    """A node that holds no pod of lower priority than the preemptor."""
    return Status.unresolvable("No preemption victims found for incoming pod")


def terminating_by_preemption(p: Pod) -> bool:
    if p.meta.deletion_timestamp is None:
        return False
    for c in p.conditions:
        if c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


def split_by_pdb_violation(pods: list[Pod], pdbs: list[PodDisruptionBudget]) -> tuple[list[Pod], list[Pod]]:
    """Upstream ``filterPodsWithPDBViolation`` with a working copy of each budget's allowance."""
    allowed = [pdb.disruptions_allowed for pdb in pdbs]
    violating: list[Pod] = []
    ok: list[Pod] = []
    for pod in pods:
        violates = False
        if pod.labels:
            for i, pdb in enumerate(pdbs):
                if pdb.meta.namespace != pod.namespace:
                    continue
                if pdb.selector.empty or not pdb.selector.matches(pod.labels):
                    continue
                if pod.name in pdb.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violates = True
        (violating if violates else ok).append(pod)
    return violating, ok


class DefaultPreemption(PostFilterPlugin, PreEnqueuePlugin):
    NAME = NAME

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle,
                 rng: random.Random | None = None) -> None:
        self.args = args if args is not None else decode_args(None)
        self.handle = handle
        self.rng = rng  # None: offset 0 (deterministic); a Random: upstream's random offset
        self._below: dict[NodeInfo, _LowerPods] = {}  # see _lower_pods

    def pre_enqueue(self, pod: Pod) -> Status | None:
        return None  # preemption runs synchronously here, so no pod waits for its own preemption

    # ------------------------------------------------------------------ PostFilter
    def post_filter(self, state: CycleState, pod: Pod,
                    statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        result, status = self.preempt(state, pod, statuses)
        msg = status.message() if status is not None else ""
        if msg:
            return result, Status(status.code, "preemption: " + msg)  # type: ignore[union-attr]
        return result, status

    def preempt(self, state: CycleState, pod: Pod,
                statuses: NodeToStatus) -> tuple[PostFilterResult | None, Status | None]:
        details = PreemptionDetails()
        ok, msg = self.eligible(pod, statuses.get(self.handle.snapshot.nominated_node_name(pod)))
        if not ok:
            return PostFilterResult(details={"preemption": details}), Status.unschedulable(msg)
        all_nodes = self.handle.snapshot.node_infos
        candidates, node_statuses = self.find_candidates(state, pod, all_nodes, statuses, details)
        details.candidates = candidates
        bound_here = self.handle.state.bound_here
        details.bound_here = frozenset(v.key for c in candidates for v in c.victims if v.key in bound_here)
        details.node_statuses = node_statuses.statuses
        if not candidates:
            node_statuses.absent = Status.unresolvable("Preemption is not helpful for scheduling")
            from pysched.framework.fiterror import fit_error_message
            text = fit_error_message(len(all_nodes), node_statuses, "", "")
            return PostFilterResult("", details={"preemption": details}), Status.unschedulable(text)
        candidates, st = self.call_extenders(pod, candidates)
        if st is not None:
            return None, st
        if not candidates:
            return None, Status.unschedulable("no candidate node for preemption")
        best = self.select_candidate(candidates, details)
        details.chosen = best.node
        return (PostFilterResult(best.node, list(best.victims), details={"preemption": details}), None)

    def call_extenders(self, pod: Pod, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Upstream ``callExtenders``: extenders that support preemption may drop candidates or change
        their victims (an Error status when a non-ignorable one fails)."""
        extenders = self.handle.extenders
        if not extenders:
            return candidates, None
        victims = {c.node: Victims(list(c.victims), c.num_pdb_violations) for c in candidates}
        kept, st = call_extenders_for_preemption(extenders, pod, victims, self.handle.snapshot.get)
        if st is not None:
            return [], st
        return [Candidate(node, v.pods, v.num_pdb_violations) for node, v in kept.items()], None

    def eligible(self, pod: Pod, nominated_status: Status) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, "not eligible due to preemptionPolicy=Never."
        nominated = self.handle.snapshot.nominated_node_name(pod)
        if nominated:
            if nominated_status.code == Code.UnschedulableAndUnresolvable:
                return True, ""
            ni = self.handle.snapshot.get(nominated)
            if ni is not None:
                for p in ni.pods:
                    if p.priority < pod.priority and terminating_by_preemption(p):
                        return False, "not eligible due to a terminating pod on the nominated node."
        return True, ""

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        n = max(n, self.args.min_candidate_nodes_absolute)
        return min(n, num_nodes)

    def find_candidates(self, state: CycleState, pod: Pod, all_nodes: list[NodeInfo], statuses: NodeToStatus,
                        details: PreemptionDetails) -> tuple[list[Candidate], NodeToStatus]:
        potential = statuses.nodes_for_code(all_nodes, Code.Unschedulable)
        details.potential_nodes = [n.name for n in potential]
        node_statuses = NodeToStatus()
        if not potential:
            return [], node_statuses
        pdbs = self.handle.snapshot.cluster.pdbs
        want = self.num_candidates(len(potential))
        offset = self.rng.randrange(len(potential)) if self.rng is not None else 0
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        prio = pod.priority
        no_victims = no_victims_status()  # one object for every node without victims (read-only)
        split = self._filter_split(state)
        # built once for every node of this preemption: which victims would change the PreFilter state
        checks = self.handle.framework.removal_checks(state, pod) if split is not None else []
        position = split.position if split is not None else {}
        kept: dict[int, Status] = {}  # a copy per distinct cycle Filter status a node keeps (read-only)
        filter_status_of = statuses.statuses.get
        nominated_on = self.handle.snapshot.nominated_pods_for
        out = node_statuses.statuses
        below = self._below
        unschedulable = Code.Unschedulable
        for original in potential[offset:] + potential[:offset]:
            name = original.name
            low = below.get(original)
            if low is None or low.generation != original.generation:
                low = self._lower_pods(original)
            if low.lowest >= prio:
                # nothing to evict: the dry run would end before touching the node or the state, so
                # neither is copied (on a full cluster most nodes hold only pods of equal or higher priority)
                out[name] = no_victims
                continue
            # A node a Filter plugin rejected is first judged again from that plugin on; only a node that
            # may become a candidate gets the full dry run.
            fs = filter_status_of(name)
            if fs is not None and fs.code == unschedulable and fs.plugin in position:
                # the pods nominated there that this pod's Filter counts: the cycle's Filter saw them, and so
                # does the judgement, as long as adding them changes no PreFilter state
                nominated = nominated_on(name)
                counted = [p for p in nominated if filters_with(p, pod)] if nominated else nominated
                if not counted or split.fixed_state:  # type: ignore[union-attr]
                    victims = low.below.get(prio)
                    if victims is None:
                        victims = low.below[prio] = [p for p in original.pods if p.priority < prio]
                    st = self._judge_from(state, pod, original, split, position[fs.plugin],  # type: ignore[arg-type]
                                          fs, checks, kept, victims, counted)
                    if st is not None:
                        out[name] = st
                        continue
            c = self._full_dry_run(state, pod, original, pdbs)
            if isinstance(c, Status):
                out[name] = c
                continue
            target = non_violating if c.num_pdb_violations == 0 else violating
            if len(target) < want:
                target.append(c)
            if non_violating and len(non_violating) + len(violating) >= want:
                break
        return non_violating + violating, node_statuses

    def _full_dry_run(self, state: CycleState, pod: Pod, node: NodeInfo,
                      pdbs: list[PodDisruptionBudget]) -> Candidate | Status:
        """What removing the node's lower-priority pods gives (copies of the node and the state, every
        Filter plugin): a candidate, or the status the node ends with."""
        victims, violations, st = self.select_victims_on_node(state.clone(), pod, node.clone(), pdbs)
        if st is None and victims:
            return Candidate(node.name, victims, violations)
        return st if st is not None else Status.as_error(f'expected at least one victim pod on node "{node.name}"')

    def _judge_from(self, state: CycleState, pod: Pod, node: NodeInfo, split: FilterSplit, at: int,
                    filter_status: Status, checks: list[RemovalCheck], kept: dict[int, Status],
                    victims: list[Pod], nominated: list[Pod]) -> Status | None:
        """The status the full dry run ends with, for a node whose Filter status came from plugin ``at``;
        None when every plugin passes without the victims (the node may be a candidate).

        The plugins before ``at`` passed with every pod in place, so they pass without the victims (head
        plugins pass more easily with fewer pods; tail plugins see the same node object and, when no
        victim changes a PreFilter count, the same state). Head plugins from ``at`` on are judged on a
        copy of the node without the victims; tail plugins on the node itself (they read only its
        object), with the cycle's state when no victim changes it, else after RemovePod on a copy.
        A tail-rejected node that keeps its Filter status gets a copy of it, one per distinct status
        object (``kept``, by id: the cycle's statuses outlive this preemption). ``victims``: the node's pods
        of lower priority than ``pod``, in the node's order (read only). ``nominated``: the pods nominated
        to the node that the pod's Filter counts (only when ``split.fixed_state``, or none): the cycle's
        Filter judged the node with them, and the full dry run's first Filter pass adds them to the node
        without its victims; that pass decides (head plugins pass the second, lighter one too)."""
        fwk = self.handle.framework
        if at < split.head:
            lighter = node.clone()
            for p in victims:
                lighter.remove_pod(p)
            for p in nominated:
                lighter.add_pod(p)
            st = fwk.run_filter(state, pod, lighter, split.active[at:split.head])
            if st is not None:
                return st
        if not self._victims_change_state(checks, victims, node):
            if at >= split.head:  # the tail judges as the cycle's Filter did
                copy = kept.get(id(filter_status))
                if copy is None:
                    copy = kept[id(filter_status)] = Status(filter_status.code, *filter_status.reasons,
                                                            plugin=filter_status.plugin)
                return copy
            return fwk.run_filter(state, pod, node, split.active[split.head:])
        trial = state.clone()
        for p in victims:
            st = fwk.run_pre_filter_remove_pod(trial, pod, p, node)
            if st is not None:
                return st
        return fwk.run_filter(trial, pod, node, split.active[split.head:])

    def _lower_pods(self, node: NodeInfo) -> _LowerPods:
        """What dry runs ask of the node's pods, kept until they change."""
        low = _LowerPods(node.generation, min((p.priority for p in node.pods), default=float("inf")), {})
        self._below[node] = low
        return low

    def _filter_split(self, state: CycleState) -> FilterSplit | None:
        """This cycle's Filter plugins as a head that only passes more easily once pods leave a node and a
        tail that reads nothing of a node but its object; None when they do not split so (or extenders
        filter too, or another PreFilter plugin has AddPod/RemovePod): every dry run goes the full way."""
        fwk = self.handle.framework
        if self.handle.extenders:
            return None  # an extender's Filter statuses name no plugin this reasoning covers
        skip = state.skip_filter_plugins
        if any(p.name not in NODE_OBJECT_ONLY for p in fwk.pre_filter_with_extensions if p.name not in skip):
            return None
        active = [p for p in fwk.filter if p.name not in skip]
        k = 0
        while k < len(active) and active[k].name in PASS_WITHOUT_PODS:
            k += 1
        if any(p.name not in NODE_OBJECT_ONLY for p in active[k:]):
            return None
        fixed = all(p.name in skip for p in fwk.pre_filter_with_extensions)
        return FilterSplit([(p.name, p.filter) for p in active], k, {p.name: i for i, p in enumerate(active)},
                           fixed)

    @staticmethod
    def _victims_change_state(checks: list[RemovalCheck], victims: list[Pod], node: NodeInfo) -> bool:
        """Whether removing ``victims`` from ``node`` would change any PreFilter state (``checks``: the
        framework's ``removal_checks``)."""
        for check in checks:
            if check(victims, node):
                return True
        return False

    def select_victims_on_node(self, state: CycleState, pod: Pod, node: NodeInfo,
                               pdbs: list[PodDisruptionBudget]) -> tuple[list[Pod], int, Status | None]:
        fwk = self.handle.framework
        potential = [p for p in node.pods if p.priority < pod.priority]
        for p in potential:
            node.remove_pod(p)
            st = fwk.run_pre_filter_remove_pod(state, pod, p, node)
            if st is not None:
                return [], 0, st
        if not potential:
            return [], 0, no_victims_status()
        st = fwk.run_filter_with_nominated(state, pod, node)
        if st is not None and st.code != Code.Success:
            return [], 0, st
        bound_here = self.handle.state.bound_here
        potential = sort_by_importance(potential, bound_here)
        violating, non_violating = split_by_pdb_violation(potential, pdbs)
        victims: list[Pod] = []
        num_violations = 0

        def reprieve(p: Pod) -> bool:
            node.add_pod(p)
            fwk.run_pre_filter_add_pod(state, pod, p, node)
            fits = fwk.run_filter_with_nominated(state, pod, node) is None
            if not fits:
                node.remove_pod(p)
                fwk.run_pre_filter_remove_pod(state, pod, p, node)
                victims.append(p)
            return fits

        for p in violating:
            if not reprieve(p):
                num_violations += 1
        for p in non_violating:
            reprieve(p)
        if violating and non_violating:
            victims = sort_by_importance(victims, bound_here)
        return victims, num_violations, None

    def select_candidate(self, candidates: list[Candidate], details: PreemptionDetails) -> Candidate:
        if len(candidates) == 1:
            details.tied = [candidates[0].node]
            return candidates[0]
        by_node = {c.node: c for c in candidates}
        remaining = [c.node for c in candidates]
        keys = {c.node: candidate_key(c, self.handle.state.bound_here) for c in candidates}
        for i in range(len(CANDIDATE_CRITERIA)):
            best = max(keys[n][i] for n in remaining)
            remaining = [n for n in remaining if keys[n][i] == best]
            if len(remaining) == 1:
                break
        details.tied = sorted(remaining)
        # Upstream takes the first of a Go map's iteration here (random): name order makes it deterministic.
        choice = sorted(remaining)[0] if self.rng is None else self.rng.choice(sorted(remaining))
        return by_node[choice]


PLUGIN = DefaultPreemption


def decode_args(raw: object) -> DefaultPreemptionArgs:
    return decode_plugin_args(NAME, raw)


def factory(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args, handle, handle.preemption_rng)
