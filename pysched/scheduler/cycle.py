"""One scheduling cycle of one pod, as upstream's ``scheduleOne`` (sequential filtering)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import field

import numpy as np

from pysched.apimachinery import format_go_duration
from pysched.framework.cycle_state import CycleState
from pysched.framework.extender import (
    HTTPExtender,
    binder_for,
    find_nodes_that_pass_extenders,
    has_filters,
    has_prioritizers,
    prioritize_with_extenders,
)
from pysched.framework.fiterror import NO_NODES_AVAILABLE, fit_error_message
from pysched.framework.interface import NodeScore, NodeToStatus
from pysched.framework.runtime import Framework, filters_with, plugin_fault
from pysched.framework.status import Code, Status
from pysched.lazyclass import dataclass
from pysched.model.objects import Pod
from pysched.plugins.dynamicresources import TRACE_KEY as DRA_ALLOCATION_KEY
from pysched.plugins.volumebinding import TRACE_KEY as VOLUME_BINDING_KEY
from pysched.scheduler.fastfilter import filter_matrix, find_feasible
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.cluster import ClusterState
from pysched.snapshot.columns import NodeColumns, RowNodes, feasible_rows, node_list
from pysched.snapshot.nodeinfo import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_PERMIT_TIMEOUT = 15 * 60.0  # seconds: upstream caps what a Permit plugin may ask for
# read once: on Python 3.11 reading an enum member off its class costs about 1,000 instructions
_SCHEDULED = Outcome.SCHEDULED


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream ``numFeasibleNodesToFind`` (adaptive when the percentage is 0)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all_nodes * percentage // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


class WaitingPod:
    """A pod a Permit plugin asked to wait (upstream ``waitingPod``): it stays reserved on its node in
    the snapshot, so later pods see it, until every plugin that asked to wait allows it, one rejects it,
    or the pass ends."""

    __slots__ = ("fwk", "node_name", "pending", "pod", "reasons", "rejected", "state", "trace")

    def __init__(self, pod: Pod, node_name: str, fwk: Framework, state: CycleState, trace: CycleTrace,
                 timeouts: dict[str, float], reasons: dict[str, str]) -> None:
        self.pod = pod
        self.node_name = node_name
        self.fwk = fwk
        self.state = state
        self.trace = trace
        self.pending = dict(timeouts)  # plugin -> timeout it asked for (seconds), until it allows
        self.reasons = reasons  # plugin -> the message of its Wait status
        self.rejected: tuple[str, str] | None = None  # (plugin, message)

    @property
    def key(self) -> str:
        return self.pod.key

    def pending_plugins(self) -> list[str]:
        return list(self.pending)

    def allow(self, plugin: str | None = None) -> None:
        """``plugin`` stops holding the pod (``None``: every plugin); bound once none holds it."""
        if plugin is None:
            self.pending.clear()
        else:
            self.pending.pop(plugin, None)

    def reject(self, plugin: str, message: str) -> None:
        if self.rejected is None:
            self.rejected = (plugin, message)

    def __repr__(self) -> str:
        return f"WaitingPod({self.key} on {self.node_name}, pending={sorted(self.pending)})"


class WaitingPods:
    """Upstream's waiting-pods map, shared by every profile. Plugins reach it through their handle:
    ``handle.waiting_pods()``, ``handle.get_waiting_pod(key)``, ``handle.allow(key, plugin)`` and
    ``handle.reject_waiting_pod(key, plugin, message)``."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def add(self, wp: WaitingPod) -> None:
        self._pods[wp.key] = wp

    def remove(self, key: str) -> None:
        self._pods.pop(key, None)

    def waiting_pods(self) -> list[WaitingPod]:
        return list(self._pods.values())

    def get_waiting_pod(self, key: str) -> WaitingPod | None:
        return self._pods.get(key)

    def allow(self, key: str, plugin: str | None = None) -> bool:
        wp = self._pods.get(key)
        if wp is None:
            return False
        wp.allow(plugin)
        return True

    def reject_waiting_pod(self, key: str, plugin: str = "", message: str = "removed") -> bool:
        wp = self._pods.get(key)
        if wp is None:
            return False
        wp.reject(plugin, message)
        return True


@dataclass
class CycleOptions:
    tie_break: str = "name"  # name | random
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    global_percentage: int = 0
    evaluate_all_nodes: bool = False  # filter every node, whatever percentageOfNodesToScore says


class Scheduler:
    """Runs cycles against one ClusterState; keeps upstream's rotating start index."""

    def __init__(self, state: ClusterState, options: CycleOptions, extenders: list[HTTPExtender] | None = None,
                 waiting: WaitingPods | None = None) -> None:
        self.state = state
        self.options = options
        self.next_start_node_index = 0
        self.extenders = list(extenders or [])
        self.waiting = waiting if waiting is not None else WaitingPods()
        self.settled: list[CycleTrace] = []  # traces of waiting pods the last cycle settled
        self._to_find: dict[tuple[Framework, int], int] = {}  # (profile, node count) -> _count_to_find

    # ------------------------------------------------------------------ the cycle
    def schedule_one(self, fwk: Framework, pod: Pod, pass_no: int, trace_this: bool) -> CycleTrace:
        self.settled = []
        tr = self._schedule_one(fwk, pod, pass_no, trace_this)
        if len(self.waiting):
            self.settle_waiting(pod.key)
        return tr

    def _schedule_one(self, fwk: Framework, pod: Pod, pass_no: int, trace_this: bool) -> CycleTrace:
        tr = CycleTrace(pass_no, pod.key, pod.priority, profile=fwk.profile_name)
        nominated_name = self.state.nominated_node_name(pod)
        tr.nominated_node_before = nominated_name or None
        state = CycleState()
        all_nodes = self.state.node_infos
        if not all_nodes:
            tr.outcome = Outcome.UNSCHEDULABLE
            tr.message = NO_NODES_AVAILABLE
            return tr
        statuses = NodeToStatus()
        prefilter_msg = ""
        feasible: Sequence[NodeInfo] = []  # the fast filter's are a RowNodes (a list built only when read)
        n_feasible = n_statuses = -1  # len(feasible), len(statuses) once counted (-1: not yet)
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
            feasible = self._evaluate_nominated(fwk, state, pod, statuses, tr, nominated_name) \
                if nominated_name else []
            if not feasible:
                nodes = all_nodes
                if pre_result is not None and not pre_result.all_nodes():
                    names = pre_result.node_names or set()
                    nodes = [ni for ni in all_nodes if ni.name in names]
                    statuses.absent = Status.unresolvable(
                        f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(returned_sets))}]")
                feasible, err = self._find_nodes_that_pass_filters(fwk, state, pod, statuses, nodes)
                if trace_this:  # every plugin's verdict on exactly the nodes the pass examined
                    examined = {ni.name for ni in feasible} | set(statuses.statuses)
                    tr.filter_all = filter_matrix(fwk, self.state, state, pod, nodes, examined)
                # (each len once: a RowNodes' and the statuses' are Python calls; the extenders change both)
                n_feasible = len(feasible)
                n_statuses = len(statuses)
                self.next_start_node_index = (self.next_start_node_index + n_feasible + n_statuses) % len(all_nodes)
                if err is not None:
                    return self._error(tr, err)
                if self.extenders and feasible:
                    feasible, err = find_nodes_that_pass_extenders(self.extenders, pod, node_list(feasible),
                                                                   statuses)
                    if err is not None:
                        return self._error(tr, err)
                    n_feasible = -1
        # Per-node detail is kept only for traced pods: 10,000 cycles on 5,000 nodes must stay small.
        if trace_this:
            tr.filter = dict(statuses.statuses)
        if n_feasible < 0:  # (not counted above)
            n_feasible = len(feasible)
            n_statuses = len(statuses)
        tr.evaluated_nodes = n_statuses + n_feasible
        if n_feasible:
            if trace_this:
                tr.feasible = sorted(ni.name for ni in feasible)
            if n_feasible > 1:
                host_or_err = self._prioritize_and_select(fwk, state, pod, feasible, tr, trace_this)
                if isinstance(host_or_err, Status):
                    return self._error(tr, host_or_err)
                host = host_or_err
            else:
                host = feasible[0].name
            return self._assume_and_bind(fwk, state, pod, host, tr)
        return self._handle_failure(fwk, state, pod, statuses, prefilter_msg, tr)

    def _evaluate_nominated(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                            tr: CycleTrace, name: str) -> list[NodeInfo]:
        """A pod nominated earlier goes straight to its node (``name``) when that node passes every filter."""
        ni = self.state.get(name)
        if ni is None:
            return []
        st = fwk.run_filter_with_nominated(state, pod, ni)
        if st is None or st.code == Code.Success:
            if self.extenders:
                passed, err = find_nodes_that_pass_extenders(self.extenders, pod, [ni], statuses)
                if err is not None or not passed:
                    return []  # upstream only logs an extender error here and filters every node
            tr.fast_path = True
            return [ni]
        if st.code == Code.Error:
            return []
        statuses.set(ni.name, st)
        return []

    def _find_nodes_that_pass_filters(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                                      nodes: list[NodeInfo]) -> tuple[Sequence[NodeInfo], Status | None]:
        n = len(nodes)
        if n == 0:
            return [], None
        to_find = self._to_find.get((fwk, n))
        if to_find is None:  # fixed per profile and node count: the options and extenders never change
            to_find = self._to_find[(fwk, n)] = self._count_to_find(fwk, n)
        start = self.next_start_node_index
        if not fwk.filter:
            return [nodes[(start + i) % n] for i in range(min(to_find, n))], None
        has_nominations = any(self.state.nominated.values())
        if fwk.handle.batched and nodes is self.state.node_infos:
            # Nodes holding pods nominated by preemption are judged with those pods (per node); the others
            # on the batched path as if nobody were nominated.
            nominated = self._nominated_nodes(pod) if has_nominations else frozenset()
            fast = find_feasible(fwk, self.state, state, pod, statuses, start, to_find, nominated)
            if fast is not None:
                return fast, None
        feasible: list[NodeInfo] = []
        run = fwk.run_filter_with_nominated if has_nominations else fwk.run_filter
        for i in range(n):
            ni = nodes[(start + i) % n]
            st = run(state, pod, ni)
            if st is None or st.code == Code.Success:
                # Upstream stops only when a feasible node beyond the count turns up (parallelism 1): the
                # failing nodes before it keep their statuses, that node is neither kept nor counted, so
                # the next cycle starts on it.
                if len(feasible) >= to_find:
                    break
                feasible.append(ni)
            elif st.code == Code.Error:
                return feasible, st
            else:
                statuses.set(ni.name, st)
        return feasible, None

    def _count_to_find(self, fwk: Framework, n: int) -> int:
        """How many feasible nodes the Filter pass looks for among ``n`` nodes."""
        percentage = fwk.percentage_of_nodes_to_score()
        if percentage is None:
            percentage = self.options.global_percentage
        to_find = num_feasible_nodes_to_find(percentage, n)
        if not fwk.has_scoring() and not has_filters(self.extenders) and not has_prioritizers(self.extenders):
            to_find = 1
        if self.options.evaluate_all_nodes:
            to_find = n
        return to_find

    def _nominated_nodes(self, pod: Pod) -> frozenset[str]:
        """The nodes where ``Framework.add_nominated_pods`` would add a pod for ``pod``'s Filter: pods
        nominated there of equal or higher priority, other than ``pod`` itself."""
        return frozenset(name for name, pods in self.state.nominated.items()
                         if any(filters_with(p, pod) for p in pods))

    def _prioritize_and_select(self, fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo],
                               tr: CycleTrace, keep: bool) -> str | Status:
        st = fwk.run_pre_score(state, pod, nodes)
        if st is not None:
            return st
        if fwk.handle.batched and not self.extenders and not keep:  # the same sums and choice as arrays
            summed, st = fwk.run_score_totals(state, pod, nodes)
            if st is not None:
                return st
            return self._select_from_totals(state, nodes, summed, fwk.max_total_score)
        feasible = node_list(nodes)
        per_plugin, st = fwk.run_score(state, pod, feasible)
        if st is not None:
            return st
        names = [ni.name for ni in feasible]
        totals = [0] * len(feasible)
        for node_scores in per_plugin.values():
            for i, v in enumerate(node_scores):
                totals[i] += v
        # Extender scores (already weighted and scaled to MaxNodeScore) are added to the totals.
        extended = prioritize_with_extenders(self.extenders, pod, feasible) if self.extenders else {}
        for i, name in enumerate(names):
            for v in extended.get(name, {}).values():
                totals[i] += v
        if keep:
            scores: dict[str, dict[str, int]] = {name: {} for name in names}
            for plugin, node_scores in per_plugin.items():
                for name, v in zip(names, node_scores, strict=True):
                    scores[name][plugin] = v
            for node, per_extender in extended.items():
                scores[node].update(per_extender)
            tr.scores = scores
        # With neither Score plugins nor extenders every node scores 1 (upstream prioritizeNodes).
        if not fwk.score and not self.extenders:
            totals = [1] * len(feasible)
        return self._select_host([NodeScore(n, t) for n, t in zip(names, totals, strict=True)])

    def _select_host_batched(self, state: CycleState, feasible: list[NodeInfo], arrays: dict[str, np.ndarray],
                             scored: bool, most: int = 0) -> str:
        """The host ``_select_host`` picks, from the weighted score arrays: the highest total, ties to the
        smallest name (or at random). ``most``: an upper bound of any total (every plugin's weight times
        MaxNodeScore), 0 when unknown."""
        totals: np.ndarray | None = None
        if scored and arrays:
            vals = iter(arrays.values())
            totals = next(vals).copy()
            for a in vals:
                totals += a
        return self._select_from_totals(state, feasible, totals, most)

    def _select_from_totals(self, state: CycleState, feasible: Sequence[NodeInfo], totals: np.ndarray | None,
                            most: int = 0) -> str:
        """``_select_host_batched`` from the summed totals (a new array, changed here); None: every node
        has the same total."""
        hit = feasible_rows(state, feasible)
        if hit is not None and self.options.tie_break == "name":
            cols, rows = hit
            if totals is not None and isinstance(feasible, RowNodes) and _names_in_row_order(cols):
                # names in row order: the smallest name among the highest totals is the smallest row
                # among them, found from the window order of the rows (no name ranks gathered)
                return str(cols.names_arr[rows.item(first_best_in_row_order(totals, rows, feasible.low))])
            # One argmax over total * n + (n - 1 - name rank): the highest total, then the smallest name.
            # Totals are in [0, most] (each array was range-checked before weighting), so nothing overflows.
            ranks, n_rows = _name_ranks(cols)
            below = ranks[rows]
            if totals is None:
                return str(cols.names_arr[rows[int(below.argmax())]])
            if 0 < most < (1 << 62) // max(cols.n, 1):
                np.multiply(totals, n_rows, out=totals)
                totals += below
                return str(cols.names_arr[rows[int(totals.argmax())]])
        best = np.flatnonzero(totals == totals.max()) if totals is not None else np.arange(len(feasible))
        if hit is not None:
            tied = hit[0].names_arr[hit[1][best]].tolist()
        else:
            tied = [feasible[i].name for i in best.tolist()]
        if self.options.tie_break == "random":
            return self.options.rng.choice(sorted(tied))
        return min(tied)

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
        if st is None and fwk.permit:  # (no Permit plugin: _run_permit's answer is None, nothing waits)
            st, timeouts, reasons = self._run_permit(fwk, state, pod, host)
            if st is not None and st.code == Code.Wait:
                return self._wait_on_permit(fwk, state, pod, host, tr, timeouts, reasons)
        if st is not None:
            return self._fail_binding(fwk, state, pod, host, tr, st, assumed=False)
        return self._binding_cycle(fwk, state, pod, host, tr, assumed=False)

    def _run_permit(self, fwk: Framework, state: CycleState, pod: Pod,
                    host: str) -> tuple[Status | None, dict[str, float], dict[str, str]]:
        """Upstream ``RunPermitPlugins``: a rejection or an error stops at once; every plugin that asks
        to wait is remembered with its timeout and reason."""
        timeouts: dict[str, float] = {}
        reasons: dict[str, str] = {}
        for p in fwk.permit:
            try:
                st, timeout = p.permit(state, pod, host)
            except Exception as exc:
                return plugin_fault(p.name, "Permit", pod, exc, host), {}, {}
            if st is None or st.code == Code.Success:
                continue
            if st.is_rejected():
                return st.with_plugin(p.name), {}, {}
            if st.code == Code.Wait:
                timeouts[p.name] = min(float(timeout or 0.0), MAX_PERMIT_TIMEOUT)
                reasons[p.name] = st.message()
                continue
            return Status(Code.Error, error=f'running Permit plugin "{p.name}": {st.message()}'
                          ).with_plugin(p.name), {}, {}
        if timeouts:
            wait = Status(Code.Wait, f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"')
            return wait.with_plugin(next(iter(timeouts))), timeouts, reasons
        return None, {}, {}

    def _wait_on_permit(self, fwk: Framework, state: CycleState, pod: Pod, host: str, tr: CycleTrace,
                        timeouts: dict[str, float], reasons: dict[str, str]) -> CycleTrace:
        """Hold the pod: assumed on ``host`` in the snapshot until it is allowed or rejected."""
        self.state.bind(pod, host)
        wp = WaitingPod(pod, host, fwk, state, tr, timeouts, reasons)
        for plugin, timeout in timeouts.items():
            if timeout <= 0:  # upstream's timer fires at once
                wp.reject(plugin, f"rejected due to timeout after waiting {_duration(timeout)} at plugin {plugin}")
                break
        self.waiting.add(wp)
        tr.outcome = Outcome.WAITING
        tr.node = host
        return tr

    def _binding_cycle(self, fwk: Framework, state: CycleState, pod: Pod, host: str, tr: CycleTrace,
                       assumed: bool) -> CycleTrace:
        """PreBind, Bind (an interested binding extender instead of the Bind plugins), PostBind."""
        st = fwk.run_pre_bind(state, pod, host)
        if st is None:
            binder = binder_for(self.extenders, pod) if self.extenders else None
            if binder is not None:
                tr.bound_by = binder.trace_key  # its bindVerb is never called
            else:
                bound_by, st = fwk.run_bind(state, pod, host)
                tr.bound_by = bound_by or None
        if st is not None:
            return self._fail_binding(fwk, state, pod, host, tr, st, assumed)
        if not assumed:
            self.state.bind(pod, host)
        fwk.run_post_bind(state, pod, host)
        tr.outcome = _SCHEDULED
        tr.node = host
        tr.volume_binding = state.read(VOLUME_BINDING_KEY)
        tr.dra_allocation = state.read(DRA_ALLOCATION_KEY)
        return tr

    def _fail_binding(self, fwk: Framework, state: CycleState, pod: Pod, host: str, tr: CycleTrace, st: Status,
                      assumed: bool) -> CycleTrace:
        fwk.run_unreserve(state, pod, host)
        if assumed:
            self._forget(pod)
        tr.node = None
        if st.is_rejected() or st.code == Code.Wait:
            tr.outcome = Outcome.UNSCHEDULABLE
            tr.message = f"{st.plugin}: {st.message()}" if st.plugin else st.message()
        else:  # an error's text already says where it came from
            tr.outcome = Outcome.ERROR
            tr.message = tr.error = st.message()
        return tr

    def _forget(self, pod: Pod) -> None:
        """Take an assumed pod out of the snapshot again (upstream ``ForgetPod``)."""
        self.state.delete_pod(pod)

    # ------------------------------------------------------------------ pods waiting on Permit
    def settle_waiting(self, during: str) -> None:
        """Bind the waiting pods every plugin has allowed and give up the rejected ones, in the order they
        began to wait, until none is left to settle (an Unreserve may reject a sibling that waits)."""
        after = f"after the cycle of pod {during}" if during else "at the end of the pass"
        while True:
            ready = [wp for wp in self.waiting.waiting_pods() if wp.rejected is not None or not wp.pending]
            if not ready:
                return
            for wp in ready:
                self.settled.append(wp.trace)
                if wp.rejected is not None:
                    plugin, message = wp.rejected
                    self._give_up(wp, f"{plugin}: {message}" if plugin else message)
                    continue
                self.waiting.remove(wp.key)
                tr = wp.trace
                self._binding_cycle(wp.fwk, wp.state, wp.pod, wp.node_name, tr, assumed=True)
                if tr.outcome is Outcome.SCHEDULED:
                    tr.message = f"waited on Permit ({', '.join(sorted(wp.reasons))}); allowed {after}"

    def end_pass(self, pass_no: int) -> None:
        """Pods still waiting when a pass ends are rejected, as upstream's Permit timeout would."""
        for wp in self.waiting.waiting_pods():
            if wp.rejected is not None or not wp.pending:
                continue
            plugin = next(iter(wp.pending))
            timeout = _duration(wp.pending[plugin])
            reason = wp.reasons.get(plugin, "")
            if reason:
                text = (f"{reason} (still waiting on Permit at the end of pass {pass_no}; kube-scheduler "
                        f"rejects the pod after {timeout})")
            else:
                text = f"rejected due to timeout after waiting {timeout} at plugin {plugin}"
            wp.reject(plugin, text)
        self.settle_waiting("")

    def _give_up(self, wp: WaitingPod, message: str) -> None:
        self.waiting.remove(wp.key)
        wp.fwk.run_unreserve(wp.state, wp.pod, wp.node_name)
        self._forget(wp.pod)
        tr = wp.trace
        tr.outcome = Outcome.UNSCHEDULABLE
        tr.node = None
        tr.message = message

    def _handle_failure(self, fwk: Framework, state: CycleState, pod: Pod, statuses: NodeToStatus,
                        prefilter_msg: str, tr: CycleTrace) -> CycleTrace:
        postfilter_msg = ""
        if fwk.post_filter:
            result, pst = fwk.run_post_filter(state, pod, statuses)
            tr.postfilter_status = pst
            if result is not None:
                tr.preemption = result.details.get("preemption")
            if pst.code == Code.Success and result is not None and result.nominated_node_name:
                self._apply_preemption(pod, result.nominated_node_name, result.victims, tr, pst.plugin)
                tr.message = fit_error_message(len(self.state.node_infos), statuses, prefilter_msg, "")
                return tr
            if pst.code != Code.Success:
                postfilter_msg = pst.message()
            if result is not None and result.nominated_node_name == "" and pst.code != Code.Success:
                self.state.clear_nomination(pod)
        tr.outcome = Outcome.UNSCHEDULABLE
        tr.message = fit_error_message(len(self.state.node_infos), statuses, prefilter_msg, postfilter_msg)
        return tr

    def _apply_preemption(self, pod: Pod, node: str, victims: list[Pod], tr: CycleTrace, plugin: str = "") -> None:
        deleted = []
        for v in victims:
            if v.terminating:
                continue  # already on its way out: not deleted again, it stays until it terminates
            if self.waiting.reject_waiting_pod(v.key, plugin, "preempted"):
                deleted.append(v.key)  # a waiting victim is rejected, not deleted: it is pending again
                continue
            self.state.evict(v)
            deleted.append(v.key)
        for other in list(self.state.nominated_pods_for(node)):
            if other.priority < pod.priority:
                self.state.clear_nomination(other)
        self.state.nominate(pod, node)
        tr.outcome = Outcome.NOMINATED
        tr.nominated_node = node
        tr.victims = deleted

    def _error(self, tr: CycleTrace, st: Status) -> CycleTrace:
        tr.outcome = Outcome.ERROR
        tr.error = st.message()
        tr.message = st.message()
        return tr


def name_rank_below(cols: NodeColumns) -> np.ndarray:
    """Per node row, how many node names sort after its own (``n - 1 -`` its rank in name order): the
    larger, the smaller the name. Names never change in one set of columns, so it is built once."""
    return _name_ranks(cols)[0]


def _name_ranks(cols: NodeColumns) -> tuple[np.ndarray, np.ndarray]:
    """``name_rank_below`` and the number of rows as a 0-d int64 array (the host choice's multiplier)."""
    hit = cols.name_ranks
    if hit is None:
        order = sorted(range(cols.n), key=cols.names_arr.__getitem__)
        below = np.empty(cols.n, dtype=np.int64)
        below[np.array(order, dtype=np.int64)] = np.arange(cols.n - 1, -1, -1, dtype=np.int64)
        below.flags.writeable = False
        n_rows = np.array(cols.n, dtype=np.int64)
        n_rows.flags.writeable = False
        hit = cols.name_ranks = (below, n_rows)
    return hit


def _names_in_row_order(cols: NodeColumns) -> bool:
    """Whether the node names ascend with the rows (as they do when the input lists nodes by name); asked
    once per set of columns."""
    hit = cols.names_sorted
    if hit is None:
        names = cols.names_arr.tolist()
        hit = cols.names_sorted = names == sorted(names)  # (names are distinct)
    return hit


def first_best_in_row_order(totals: np.ndarray, rows: np.ndarray, low: int = -1) -> int:
    """The place in ``rows`` of the smallest row among those with the highest total (``totals`` aligned
    with ``rows``). ``rows``: distinct rows in window order (a ``RowNodes``' rows: ascending from the start
    row, then, when the window wrapped past the last row, ascending again from row 0), so the first
    highest total of the wrapped part, if any, else the first of the whole, is the smallest such row.
    ``low``: the place of the smallest row when known (``RowNodes.low``), else -1 (then looked for)."""
    i = int(totals.argmax())
    if low < 0:
        low = int(rows.argmin()) if rows[0] > rows[-1] else 0
    if i < low:  # wrapped (the smallest row starts the second run), and the first highest total before it
        k = low + int(totals[low:].argmax())
        if totals.item(k) == totals.item(i):
            return k
    return i


def _duration(seconds: float) -> str:
    return format_go_duration(round(seconds * 1e9))
