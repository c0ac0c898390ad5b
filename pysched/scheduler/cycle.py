"""One scheduling cycle of one pod, as upstream's ``scheduleOne`` (sequential filtering)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pysched.framework.cycle_state import CycleState
from pysched.framework.fiterror import NO_NODES_AVAILABLE, fit_error_message
from pysched.framework.interface import NodeScore, NodeToStatus
from pysched.framework.runtime import Framework
from pysched.framework.status import Code, Status
from pysched.model.objects import Pod
from pysched.scheduler.trace import CycleTrace
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.nodeinfo import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive when the percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class CycleOptions:
    tie_break: str = "name"  # name | random
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    global_percentage: int = 0
    trace: bool = False


class Scheduler:
    """Runs cycles against one ClusterState; keeps upstream's rotating start index."""

    def __init__(self, state: ClusterState, options: CycleOptions) -> None:
        self.state = state
        self.options = options
        self.next_start_node_index = 0

    # ------------------------------------------------------------------ the cycle
    def schedule_one(self, fwk: Framework, pod: Pod, pass_no: int, trace_this: bool) -> CycleTrace:
        tr = CycleTrace(pass_no, pod.key, pod.priority, profile=fwk.profile_name)
        tr.nominated_node_before = pod.nominated_node_name or None
        state = CycleState()
        all_nodes = self.state.node_infos
        if not all_nodes:
            tr.outcome = "Unschedulable"
            tr.message = NO_NODES_AVAILABLE
            return tr
        statuses = NodeToStatus()
        prefilter_msg = ""
        feasible: list[NodeInfo] = []
        pre_result, st, returned_sets = fwk.run_pre_filter(state, pod, all_nodes)
        if st is not None and st.code != Code.Success:
            if st.code == Code.Error:
                return self._error(tr, st)
            statuses.absent = st
            prefilter_msg = st.message()
            tr.prefilter_reject = st
        else:
            if pre_result is not None and not pre_result.all_nodes():
                tr.prefilter_nodes = sorted(pre_result.node_names or ())
            feasible = self._evaluate_nominated(fwk, state, pod, statuses, tr)
            if not feasible:
                nodes = all_nodes
                if pre_result is not None and not pre_result.all_nodes():
                    names = pre_result.node_names or set()
                    nodes = [ni for ni in all_nodes if ni.name in names]
                    statuses.absent = Status.unresolvable(
                        f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(returned_sets))}]")
                if trace_this:
                    tr.filter_all = {ni.name: fwk.run_filter_each(state, pod, ni) for ni in nodes}
                feasible, err = self._find_nodes_that_pass_filters(fwk, state, pod, statuses, nodes)
                processed = len(feasible) + len(statuses)
                self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
                if err is not None:
                    return self._error(tr, err)
        # Per-node detail is kept only for traced pods: 10,000 cycles on 5,000 nodes must stay small.
        if trace_this:
            tr.filter = dict(statuses.statuses)
        tr.evaluated_nodes = len(statuses) + len(feasible)
        if feasible:
            if trace_this:
                tr.feasible = sorted(ni.name for ni in feasible)
            host = feasible[0].name
            if len(feasible) > 1:
                host_or_err = self._prioritize_and_select(fwk, state, pod, feasible, tr, trace_this)
                if isinstance(host_or_err, Status):
                    return self._error(tr, host_or_err)
                host = host_or_err
            return self._assume_and_bind(fwk, state, pod, host, tr)
        return self._handle_failure(fwk, state, pod, statuses, prefilter_msg, tr)

    def _evaluate_nominated(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                            tr: CycleTrace) -> list[NodeInfo]:
        """A pod nominated earlier goes straight to its node when that node passes every filter."""
        name = pod.nominated_node_name
        ni = self.state.get(name) if name else None
        if ni is None:
            return []
        st = fwk.run_filter_with_nominated(state, pod, ni)
        if st is None or st.code == Code.Success:
            tr.fast_path = True
            return [ni]
        if st.code == Code.Error:
            return []
        statuses.set(ni.name, st)
        return []

    def _find_nodes_that_pass_filters(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                                      nodes: list[NodeInfo]) -> tuple[list[NodeInfo], Status | None]:
        n = len(nodes)
        if n == 0:
            return [], None
        percentage = fwk.percentage_of_nodes_to_score()
        if percentage is None:
            percentage = self.options.global_percentage
        to_find = num_feasible_nodes_to_find(percentage, n)
        if not fwk.has_scoring():
            to_find = 1
        start = self.next_start_node_index
        if not fwk.filter:
            return [nodes[(start + i) % n] for i in range(min(to_find, n))], None
        feasible: list[NodeInfo] = []
        run = fwk.run_filter_with_nominated
        has_nominations = bool(self.state.nominated)
        run_plain = fwk.run_filter
        for i in range(n):
            ni = nodes[(start + i) % n]
            st = run(state, pod, ni) if has_nominations else run_plain(state, pod, ni)
            if st is None or st.code == Code.Success:
                feasible.append(ni)
                if len(feasible) >= to_find:
                    break
            elif st.code == Code.Error:
                return feasible, st
            else:
                statuses.set(ni.name, st)
        return feasible, None

    def _prioritize_and_select(self, fwk: Framework, state: CycleState, pod: Pod, feasible: list[NodeInfo],
                               tr: CycleTrace, keep: bool) -> str | Status:
        st = fwk.run_pre_score(state, pod, feasible)
        if st is not None:
            return st
        per_plugin, st = fwk.run_score(state, pod, feasible)
        if st is not None:
            return st
        scores: dict[str, dict[str, int]] = {ni.name: {} for ni in feasible}
        for plugin, node_scores in per_plugin.items():
            for ns in node_scores:
                scores[ns.name][plugin] = ns.score
        if not fwk.score:
            for ni in feasible:
                scores[ni.name] = {}
        if keep:
            tr.scores = scores
        totals = [NodeScore(n, sum(p.values()) if fwk.score else 1) for n, p in scores.items()]
        return self._select_host(totals)

    def _select_host(self, totals: list[NodeScore]) -> str:
        best = max(t.score for t in totals)
        tied = sorted(t.name for t in totals if t.score == best)
        if self.options.tie_break == "random":
            return self.options.rng.choice(tied)
        return tied[0]

    # ------------------------------------------------------------------ after a node is chosen
    def _assume_and_bind(self, fwk: Framework, state: CycleState, pod: Pod, host: str,
                         tr: CycleTrace) -> CycleTrace:
        st = fwk.run_reserve(state, pod, host)
        if st is None:
            st = fwk.run_permit(state, pod, host)
        if st is None:
            st = fwk.run_pre_bind(state, pod, host)
        if st is None:
            bound_by, st = fwk.run_bind(state, pod, host)
            tr.bound_by = bound_by or None
        if st is not None:
            fwk.run_unreserve(state, pod, host)
            tr.outcome = "Unschedulable" if st.is_rejected() or st.code == Code.Wait else "Error"
            tr.message = f"{st.plugin}: {st.message()}" if st.plugin else st.message()
            return tr
        self.state.bind(pod, host)
        fwk.run_post_bind(state, pod, host)
        tr.outcome = "Scheduled"
        tr.node = host
        return tr

    def _handle_failure(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                        prefilter_msg: str, tr: CycleTrace) -> CycleTrace:
        postfilter_msg = ""
        if fwk.post_filter:
            result, pst = fwk.run_post_filter(state, pod, statuses)
            tr.postfilter_status = pst
            if result is not None:
                tr.preemption = result.details.get("preemption")
            if pst.code == Code.Success and result is not None and result.nominated_node_name:
                self._apply_preemption(pod, result.nominated_node_name, result.victims, tr)
                tr.message = fit_error_message(len(self.state.node_infos), statuses, prefilter_msg, "")
                return tr
            if pst.code != Code.Success:
                postfilter_msg = pst.message()
            if result is not None and result.nominated_node_name == "" and pst.code != Code.Success:
                self.state.clear_nomination(pod)
        tr.outcome = "Unschedulable"
        tr.message = fit_error_message(len(self.state.node_infos), statuses, prefilter_msg, postfilter_msg)
        return tr

    def _apply_preemption(self, pod: Pod, node: str, victims: list[Pod], tr: CycleTrace) -> None:
        deleted = []
        for v in victims:
            if v.terminating:
                continue  # already on its way out: not deleted again, it stays until it terminates
            self.state.delete_pod(v)
            deleted.append(v.key)
        for other in list(self.state.nominated_pods_for(node)):
            if other.priority < pod.priority:
                self.state.clear_nomination(other)
        self.state.nominate(pod, node)
        tr.outcome = "Nominated"
        tr.nominated_node = node
        tr.victims = deleted

    def _error(self, tr: CycleTrace, st: Status) -> CycleTrace:
        tr.outcome = "Error"
        tr.error = st.message()
        tr.message = st.message()
        return tr
