"""What would make a pod fit, computed: for the nodes nearest to accepting the pod, the smallest change that
flips each failing Filter verdict, every change checked by running PreFilter and Filter again on modified
copies of the nodes and of the pod. Also the explain run (the simulation up to and including a pod's last
cycle) and the reasoning behind a preemption choice.

Nothing here changes the simulation's state: modified nodes are clones (``NodeInfo.clone`` with, where a
label or the cordon changes, a copy of the ``Node``), a modified pod is a copy, and every check runs in a
fresh ``CycleState``. The results are plain dataclasses; ``report/explain.py`` words and draws them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pysched.framework.config import SchedulerConfig
from pysched.framework.cycle_state import CycleState
from pysched.framework.interface import FilterPlugin
from pysched.framework.registry import Registry
from pysched.framework.runtime import Framework
from pysched.framework.status import Code, Status
from pysched.framework.whatif import (  # re-exported: report/explain.py and the tests read them from here
    DEVICES as DEVICES,
    INTER_POD as INTER_POD,
    NODE_AFFINITY as NODE_AFFINITY,
    OTHER as OTHER,
    PORTS as PORTS,
    RESOURCES as RESOURCES,
    SPREAD as SPREAD,
    TAINTS as TAINTS,
    UNSCHEDULABLE as UNSCHEDULABLE,
    Change as Change,
    Eviction as Eviction,
    WhatIfPlugin,
    toleration_dict as toleration_dict,
)
from pysched.model.labels import LabelSelector, Requirement
from pysched.model.objects import HostPort, Node, Pod, Taint, Toleration, tolerates_taint
from pysched.plugins import interpodaffinity as ipa, podtopologyspread as pts
from pysched.plugins.defaultpreemption import CANDIDATE_CRITERIA, PreemptionDetails, candidate_key
from pysched.plugins.noderesources.fit import fits_request
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.cluster import Cluster, ClusterState
from pysched.snapshot.nodeinfo import ZERO_IP, NodeInfo

NEAREST = 5  # nodes for which a change is computed
MAX_SPREAD_CHECKS = 25  # re-checks while growing a topology-spread eviction set


_REJECTED = (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending, Code.Error)


def _passes(st: Status | None) -> bool:
    return st is None or st.code in (Code.Success, Code.Skip)


def _reason(st: Status) -> str:
    return st.message() or st.code.name


# ---------------------------------------------------------------------------------------------- results
@dataclass(slots=True)
class NodeSuggestion:
    node: str
    failing: dict[str, str]  # plugin -> its reason now, in the profile's filter order
    changes: list[Change]
    fits_after: bool = False  # every change applied together: every filter passes (checked)
    still_failing: dict[str, str] = field(default_factory=dict)  # plugin -> reason with every change applied

    def to_dict(self) -> dict:
        return {"node": self.node, "failing": dict(self.failing), "changes": [c.to_dict() for c in self.changes],
                "fits_after": self.fits_after, "still_failing": dict(self.still_failing)}


@dataclass(slots=True)
class WhatIf:
    pod: str
    nodes: int  # nodes in the cluster
    candidates: int = 0  # nodes the filters ran on (after PreFilter narrowed them)
    prefilter_reject: str | None = None  # PreFilter rejected the pod: no node can be changed to help
    prefilter_narrowed_by: list[str] = field(default_factory=list)
    feasible_now: list[str] = field(default_factory=list)  # nodes that pass every filter in this state
    suggestions: list[NodeSuggestion] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"pod": self.pod, "nodes": self.nodes, "candidates": self.candidates,
                "prefilter_reject": self.prefilter_reject, "prefilter_narrowed_by": list(self.prefilter_narrowed_by),
                "feasible_now": list(self.feasible_now), "nodes_nearest": [s.to_dict() for s in self.suggestions]}


def taint_dict(t: Taint) -> dict:
    return {"key": t.key, "value": t.value, "effect": t.effect}


def selector_text(sel: LabelSelector) -> str:
    """``app=web,tier in (a,b),!legacy`` (``<nothing>`` / ``<everything>`` for the degenerate ones)."""
    if sel.nothing:
        return "<nothing>"
    if not sel.requirements:
        return "<everything>"
    return ",".join(requirement_text(r) for r in sel.requirements)


def requirement_text(r: Requirement) -> str:
    values = sorted(r.values)
    if r.op == "In":
        return f"{r.key}={values[0]}" if len(values) == 1 else f"{r.key} in ({','.join(values)})"
    if r.op == "NotIn":
        return f"{r.key}!={values[0]}" if len(values) == 1 else f"{r.key} notin ({','.join(values)})"
    if r.op == "Exists":
        return r.key
    if r.op == "DoesNotExist":
        return f"!{r.key}"
    if r.op == "Gt":
        return f"{r.key}>{values[0]}"
    if r.op == "Lt":
        return f"{r.key}<{values[0]}"
    return f"{r.key} {r.op} {values}"


# ---------------------------------------------------------------------------------------------- checking
def filter_verdicts(fwk: Framework, state: CycleState, pod: Pod, ni: NodeInfo) -> dict[str, Status]:
    """Every Filter plugin's verdict on ``ni`` as the cycle sees it: with the nominated pods of higher or
    equal priority added first and, when that passed, once more without them (upstream's two runs)."""
    added, st_nom, ni_nom, err = fwk.add_nominated_pods(state, pod, ni)
    if err is not None:
        return {"(nominated pods)": err}
    verdicts = fwk.run_filter_each(st_nom, pod, ni_nom)
    if added and all(_passes(s) for s in verdicts.values()):
        verdicts = fwk.run_filter_each(state, pod, ni)
    return verdicts


def _failing(verdicts: dict[str, Status]) -> dict[str, Status]:
    return {p: s for p, s in verdicts.items() if s.code in _REJECTED}


class _Checker:
    """Runs PreFilter and Filter again with a set of changes applied to copies."""

    def __init__(self, fwk: Framework, cs: ClusterState, pod: Pod) -> None:
        self.fwk = fwk
        self.cs = cs
        self.pod = pod

    def verdicts(self, changes: list[Change], target: str) -> dict[str, Status]:
        pod = self.pod
        tolerations = [t for c in changes for t in c.add_tolerations]
        if tolerations:
            pod = replace(pod, tolerations=tuple(pod.tolerations) + tuple(tolerations))
        clones: dict[str, NodeInfo] = {}

        def clone(name: str) -> NodeInfo:
            ni = clones.get(name)
            if ni is None:
                ni = clones[name] = self.cs.by_name[name].clone()
            return ni

        for c in changes:
            for e in c.evict:
                if e.obj is not None:
                    clone(e.node).remove_pod(e.obj)
        labels_set = {k: v for c in changes for k, v in c.set_labels.items()}
        labels_removed = {k for c in changes for k in c.remove_labels}
        uncordon = any(c.uncordon for c in changes)
        if labels_set or labels_removed or uncordon:
            ni = clone(target)
            ni.node = modified_node(ni.node, labels_set, labels_removed, uncordon)
        nodes = [clones.get(ni.name, ni) for ni in self.cs.node_infos]
        state = CycleState()
        pre, st, _ = self.fwk.run_pre_filter(state, pod, nodes)
        if st is not None and st.code != Code.Success:  # no Filter ran: the whole verdict is PreFilter's
            return {"PreFilter": Status(st.code, f"{st.plugin}: {_reason(st)}" if st.plugin else _reason(st))}
        if pre is not None and not pre.all_nodes() and target not in (pre.node_names or ()):
            return {"PreFilter": Status.unresolvable("the node is not among the nodes PreFilter allows")}
        target_ni = clones.get(target) or self.cs.by_name[target]
        return filter_verdicts(self.fwk, state, pod, target_ni)


def modified_node(node: Node, set_labels: dict[str, str], remove_labels: set[str], uncordon: bool) -> Node:
    """A copy of ``node`` with labels set or removed and, with ``uncordon``, ``spec.unschedulable`` off."""
    labels = {k: v for k, v in node.labels.items() if k not in remove_labels}
    labels.update(set_labels)
    return replace(node, meta=replace(node.meta, labels=labels),
                   unschedulable=False if uncordon else node.unschedulable)


# ---------------------------------------------------------------------------------------------- the what-if
def compute_whatif(fwk: Framework, cs: ClusterState, pod: Pod, limit: int = NEAREST) -> WhatIf:
    """For up to ``limit`` nodes with the fewest failing filter plugins, the smallest change per plugin."""
    out = WhatIf(pod.key, len(cs.node_infos))
    state = CycleState()
    pre, st, returned = fwk.run_pre_filter(state, pod, cs.node_infos)
    if st is not None and st.code != Code.Success:
        out.prefilter_reject = f"{st.plugin}: {_reason(st)}" if st.plugin else _reason(st)
        return out
    nodes = cs.node_infos
    if pre is not None and not pre.all_nodes():
        allowed = pre.node_names or set()
        nodes = [ni for ni in nodes if ni.name in allowed]
        out.prefilter_narrowed_by = sorted(returned)
    out.candidates = len(nodes)
    verdicts = {ni.name: filter_verdicts(fwk, state, pod, ni) for ni in nodes}
    failing = {n: _failing(v) for n, v in verdicts.items()}
    out.feasible_now = sorted(n for n, f in failing.items() if not f)
    ranked = sorted((n for n, f in failing.items() if f), key=lambda n: (len(failing[n]), n))[:limit]
    ctx = _Context(fwk, cs, pod, state, verdicts, _Checker(fwk, cs, pod))
    for name in ranked:
        out.suggestions.append(ctx.suggest(cs.by_name[name], failing[name]))
    return out


class _Context:
    def __init__(self, fwk: Framework, cs: ClusterState, pod: Pod, state: CycleState,
                 verdicts: dict[str, dict[str, Status]], checker: _Checker) -> None:
        self.fwk = fwk
        self.cs = cs
        self.pod = pod
        self.state = state
        self.verdicts = verdicts
        self.checker = checker
        # built-in what-ifs of the in-tree plugins that do not propose their own (WhatIfPlugin)
        self.handlers: dict[str, Callable[[NodeInfo, Status], Change]] = {
            "NodeResourcesFit": self._resources,
            "TaintToleration": self._taints,
            "NodeAffinity": self._node_affinity,
            "NodePorts": self._ports,
            "PodTopologySpread": self._spread,
            "InterPodAffinity": self._inter_pod,
        }

    # ------------------------------------------------------------------ per node
    def suggest(self, ni: NodeInfo, failing: dict[str, Status]) -> NodeSuggestion:
        changes = []
        for plugin, st in failing.items():
            change = self._change(ni, plugin, st)
            if change.has_modification and not change.checked:
                self._check(change, ni.name)
            changes.append(change)
        s = NodeSuggestion(ni.name, {p: _reason(st) for p, st in failing.items()}, changes)
        applied = [c for c in changes if c.has_modification]
        if applied:
            after = _failing(self.checker.verdicts(applied, ni.name))
            s.fits_after = not after
            s.still_failing = {p: _reason(st) for p, st in after.items()}
        else:
            s.still_failing = dict(s.failing)
        return s

    def _change(self, ni: NodeInfo, plugin: str, st: Status) -> Change:
        """The plugin's own what-if (``WhatIfPlugin``), else the built-in one, else none."""
        inst = self.fwk.instances.get(plugin)
        if isinstance(inst, WhatIfPlugin):
            try:
                change = inst.what_would_fit(self._failing_state(ni, plugin), self.pod, self._nominated_view(ni), st)
            except Exception as exc:  # a plugin's fault must not end the explanation
                return Change(plugin, OTHER, _reason(st), details={"what_if_error": f"{type(exc).__name__}: {exc}"})
            if change is None:
                return Change(plugin, OTHER, _reason(st))
            change.plugin = plugin
            change.reason = change.reason or _reason(st)
            return change
        handler = self.handlers.get(plugin)
        return handler(ni, st) if handler is not None else Change(plugin, OTHER, _reason(st))

    def _check(self, change: Change, node: str) -> bool:
        """Apply ``change`` alone to copies and run PreFilter and Filter again: does its plugin pass now?"""
        verdict = self.checker.verdicts([change], node)
        change.checked = True
        blocked = {p: st for p, st in _failing(verdict).items() if p not in self.fwk.filter_names}
        st = verdict.get(change.plugin)
        change.flips = _passes(st) and not blocked
        if st is not None and not _passes(st):
            change.after = _reason(st)
        elif blocked:
            change.after = "; ".join(f"{p}: {_reason(b)}" for p, b in blocked.items())
        else:
            change.after = ""
        return change.flips

    def _nominated_view(self, ni: NodeInfo) -> NodeInfo:
        """The node as the filters see it: with the nominated pods of higher or equal priority added."""
        added, _, ni_nom, err = self.fwk.add_nominated_pods(self.state, self.pod, ni)
        return ni_nom if added and err is None else ni

    def _failing_state(self, ni: NodeInfo, plugin: str) -> CycleState:
        """The PreFilter state in which ``plugin`` rejected ``ni``: with the nominated pods counted in, or
        (upstream's second run) without them."""
        added, state_nom, ni_nom, err = self.fwk.add_nominated_pods(self.state, self.pod, ni)
        if not added or err is not None:
            return self.state
        inst = self.fwk.instances.get(plugin)
        st = inst.filter(state_nom, self.pod, ni_nom) if isinstance(inst, FilterPlugin) else None
        return state_nom if not _passes(st) else self.state

    # ------------------------------------------------------------------ NodeResourcesFit
    def _resources(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("NodeResourcesFit", RESOURCES, _reason(st))
        inst = self.fwk.instances.get("NodeResourcesFit")
        ignored: frozenset[str] = getattr(inst, "ignored_resources", frozenset())
        groups: frozenset[str] = getattr(inst, "ignored_resource_groups", frozenset())
        view = self._nominated_view(ni)
        short = fits_request(self.pod.requests, view, ignored, groups)
        rows: list[dict[str, Any]] = []
        need: dict[str, int] = {}
        for r in short:
            free = r.capacity - r.used
            gap = (r.used + 1 - r.capacity) if r.resource == "pods" else r.requested - free
            rows.append({"resource": r.resource, "requested": r.requested, "used": r.used,
                         "allocatable": r.capacity, "free": free, "need": gap, "exceeds_allocatable": r.unresolvable})
            if not r.unresolvable:
                need[r.resource] = gap
        change.details = {"short": rows}
        if not short or any(r.unresolvable for r in short):
            for row in rows:  # more than the node's allocatable: no eviction makes room; which node has it?
                if row["exceeds_allocatable"]:
                    row["largest_allocatable"] = max(_allocatable(other, row["resource"])
                                                     for other in self.cs.node_infos)
            return change
        victims = smallest_eviction(ni.pods, need)
        if victims is None:
            change.details["no_eviction"] = True
            return change
        change.evict = [Eviction(p.key, ni.name, p.priority, p) for p in victims]
        return change

    # ------------------------------------------------------------------ TaintToleration / NodeUnschedulable
    def _taints(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("TaintToleration", TAINTS, _reason(st))
        untolerated = [t for t in ni.node.taints if t.effect in ("NoSchedule", "NoExecute")
                       and not tolerates_taint(self.pod.tolerations, t)]
        change.details = {"taints": [taint_dict(t) for t in untolerated]}
        change.add_tolerations = [Toleration(t.key, "Equal", t.value, t.effect) if t.value
                                  else Toleration(t.key, "Exists", "", t.effect) for t in untolerated]
        return change

    # ------------------------------------------------------------------ NodeAffinity
    def _node_affinity(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("NodeAffinity", NODE_AFFINITY, _reason(st))
        labels = dict(ni.node.labels)
        set_labels: dict[str, str] = {}
        remove: set[str] = set()
        details: dict[str, Any] = {}
        mismatched: list[dict[str, Any]] = [{"key": k, "want": v, "have": labels.get(k)} for k, v in sorted((self.pod.node_selector or {})
                                                                                       .items()) if labels.get(k) != v]
        if mismatched:
            details["node_selector"] = mismatched
            for m in mismatched:
                set_labels[m["key"]] = m["want"]
        after_selector = {**labels, **set_labels}
        unfixable = False
        for which, selector in (("pod", self.pod.node_affinity_required),
                                ("scheduler", getattr(self.fwk.instances.get("NodeAffinity"),
                                                      "added_node_selector", None))):
            if selector is None or selector.matches(after_selector, ni.name):
                continue
            best = self._cheapest_term(selector, after_selector, ni.name, dict(self.pod.node_selector or {}))
            if best is None:
                details[f"{which}_affinity"] = {"terms": len(selector.terms), "fixable": False}
                unfixable = True
                continue
            index, unmet, sets, removes = best
            details[f"{which}_affinity"] = {"terms": len(selector.terms), "term": index,
                                            "unmet": [requirement_text(r) for r in unmet], "fixable": True}
            set_labels.update(sets)
            remove |= removes
            for k in removes:
                after_selector.pop(k, None)
            after_selector.update(sets)
        matching = sorted(n for n, v in self.verdicts.items() if _passes(v.get("NodeAffinity")))
        details["matching_nodes"] = len(matching)
        details["matching_examples"] = matching[:5]
        change.details = details
        if not unfixable:
            change.set_labels = set_labels
            change.remove_labels = sorted(remove - set(set_labels))
        return change

    def _cheapest_term(self, selector: Any, labels: dict[str, str], node_name: str, pinned: dict[str, str]
                       ) -> tuple[int, list[Requirement], dict[str, str], set[str]] | None:
        """The term of ``selector`` that the fewest label changes make ``labels`` match, or None; the
        ``pinned`` labels (the nodeSelector's) must keep their values."""
        best = None
        for i, term in enumerate(selector.terms):
            if not term.valid:
                continue
            if term.fields and not all(r.matches({"metadata.name": node_name}) for r in term.fields):
                continue  # the term names other nodes: no label makes this one match it
            unmet = [r for r in term.expressions if not r.matches(labels)]
            sets: dict[str, str] = {}
            removes: set[str] = set()
            possible = True
            for k in dict.fromkeys(r.key for r in unmet):
                reqs = [r for r in term.expressions if r.key == k]
                if k in pinned:
                    reqs.append(Requirement(k, "In", frozenset((pinned[k],))))
                found, value = self._satisfying_value(k, reqs)
                if not found:
                    possible = False  # e.g. cpu-gen > 3 and cpu-gen < 2: no value meets both
                    break
                if value is None:
                    removes.add(k)
                else:
                    sets[k] = value
            if not possible:
                continue
            cost = len(sets) + len(removes)
            if best is None or cost < best[0]:
                best = (cost, i, unmet, sets, removes)
        if best is None:
            return None
        return best[1], best[2], best[3], best[4]

    def _satisfying_value(self, key: str, reqs: list[Requirement]) -> tuple[bool, str | None]:
        """A value of label ``key`` that meets every requirement on it: (True, None) when the label's
        absence does, (False, None) when nothing does."""
        if all(r.matches({}) for r in reqs):
            return True, None
        candidates: list[str] = []
        for r in reqs:
            values = sorted(r.values)
            if r.op == "In":
                candidates += values
            elif r.op in ("Gt", "Lt") and values:
                try:
                    bound = int(values[0])
                except ValueError:
                    continue
                candidates.append(str(bound + 1 if r.op == "Gt" else bound - 1))
        seen = Counter(ni.node.labels[key] for ni in self.cs.node_infos if key in ni.node.labels)
        candidates += [v for v, _ in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))]
        candidates.append("true")
        for v in candidates:
            if all(r.matches({key: v}) for r in reqs):
                return True, v
        return False, None

    # ------------------------------------------------------------------ NodePorts
    def _ports(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("NodePorts", PORTS, _reason(st))
        ports = []
        holders: dict[str, Pod] = {}
        for hp in self.pod.host_ports:
            if not ni.port_conflict(hp):
                continue
            held_by = [p for p in ni.pods if any(ports_clash(hp, q) for q in p.host_ports)]
            ports.append({"protocol": hp.protocol or "TCP", "port": hp.port, "ip": hp.ip or ZERO_IP,
                          "held_by": [p.key for p in held_by]})
            for p in held_by:
                holders.setdefault(p.key, p)
        change.details = {"ports": ports}
        change.evict = [Eviction(p.key, ni.name, p.priority, p) for p in sorted(holders.values(), key=lambda p: p.key)]
        return change

    # ------------------------------------------------------------------ PodTopologySpread
    def _spread(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("PodTopologySpread", SPREAD, _reason(st))
        s = self._failing_state(ni, "PodTopologySpread").read(pts.PRE_FILTER_STATE_KEY)
        if not isinstance(s, pts.PreFilterState):
            return change
        labels = ni.node.labels
        rows = []
        victims: list[tuple[Pod, str]] = []
        grow: list[list[tuple[Pod, str]]] = []
        relabel: list[tuple[str, list[str]]] = []  # (topology key, domains to try) for a missing label
        for i, c in enumerate(s.constraints):
            counts = s.tp_value_to_match_num[i]
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector.matches(self.pod.labels) else 0
            ok_domains = sorted((v for v, n in counts.items() if n + self_match - min_match <= c.max_skew),
                                key=lambda v: (counts[v], v))
            row: dict[str, Any] = {"topology_key": c.topology_key, "max_skew": c.max_skew,
                                   "selector": selector_text(c.selector), "min": min_match,
                                   "min_domain": s.critical_paths[i].v0 if len(counts) >= c.min_domains else None,
                                   "domains": len(counts), "min_domains": c.min_domains,
                                   "ok_domains": [[v, counts[v]] for v in ok_domains[:5]],
                                   "ok_domains_count": len(ok_domains)}
            value = labels.get(c.topology_key)
            if value is None:
                row["missing_label"] = True
                if ok_domains:
                    change.set_labels[c.topology_key] = ok_domains[0]
                    relabel.append((c.topology_key, ok_domains[:5]))
                rows.append(row)
                continue
            count = counts.get(value, 0)
            skew = count + self_match - min_match
            row.update(value=value, count=count, skew=skew)
            if skew <= c.max_skew:
                row["satisfied"] = True
                rows.append(row)
                continue
            excess = skew - c.max_skew
            row["excess"] = excess
            candidates = self._domain_pods(c, s.constraints, value)
            row["matching_in_domain"] = len(candidates)
            grow.append(candidates)
            victims.extend(candidates[:excess])
            rows.append(row)
        change.details["constraints"] = rows
        taken: set[str] = set()
        for p, n in victims:
            if p.key not in taken:
                taken.add(p.key)
                change.evict.append(Eviction(p.key, n, p.priority, p))
        if not change.has_modification:
            return change
        # a missing label: the first domain that satisfies maxSkew, checked; the next ones if it does not flip
        for key_, domains in relabel:
            for domain in domains:
                change.set_labels[key_] = domain
                if self._check(change, ni.name):
                    break
            else:
                change.set_labels[key_] = domains[0]
        # PreFilter's counts decide: grow the evictions one pod per domain until the checked verdict flips
        for _ in range(MAX_SPREAD_CHECKS):
            if self._check(change, ni.name):
                break
            grown = False
            for candidates in grow:
                nxt = next(((p, n) for p, n in candidates if p.key not in taken), None)
                if nxt is not None:
                    taken.add(nxt[0].key)
                    change.evict.append(Eviction(nxt[0].key, nxt[1], nxt[0].priority, nxt[0]))
                    grown = True
            if not grown:
                break
        return change

    def _domain_pods(self, c: pts.Constraint, constraints: list[pts.Constraint], value: str) -> list[tuple[Pod, str]]:
        """Pods PreFilter counted in the domain ``value`` of ``c``: lowest priority first."""
        elig = pts._Eligibility(self.pod, constraints)
        out = []
        for ni in self.cs.node_infos:
            lab = ni.node.labels
            if lab.get(c.topology_key) != value or not pts.node_has_all_keys(lab, constraints):
                continue
            if not pts._Eligibility.ok(c, elig.per_node(ni)):
                continue
            for p in ni.pods:
                if p.meta.deletion_timestamp is None and p.namespace == self.pod.namespace \
                        and c.selector.matches(p.labels):
                    out.append((p, ni.name))
        out.sort(key=lambda pn: (pn[0].priority, pn[0].key))
        return out

    # ------------------------------------------------------------------ InterPodAffinity
    def _inter_pod(self, ni: NodeInfo, st: Status) -> Change:
        change = Change("InterPodAffinity", INTER_POD, _reason(st))
        s = self._failing_state(ni, "InterPodAffinity").read(ipa.PRE_FILTER_STATE_KEY)
        if not isinstance(s, ipa.PreFilterState):
            return change
        labels = ni.node.labels
        details: dict[str, Any] = {}
        evict: dict[str, Eviction] = {}
        # the pod's required affinity: a matching pod must run in the node's domain
        if not ipa._satisfy_pod_affinity(s, labels):
            unmet = []
            relabel: dict[str, str] | None = {}
            choices: list[tuple[str, list[str]]] = []  # (topology key, domains with matching pods)
            for t in s.required_affinity:
                tv = labels.get(t.topology_key)
                if tv is not None and s.affinity_counts.get((t.topology_key, tv), 0) > 0:
                    continue
                domains = sorted(((v, n) for (k, v), n in s.affinity_counts.items()
                                  if k == t.topology_key and n > 0), key=lambda vn: (-vn[1], vn[0]))
                unmet.append({"topology_key": t.topology_key, "value": tv, "selector": selector_text(t.selector),
                              "domains_with_matches": [[v, n] for v, n in domains[:5]],
                              "domains_with_matches_count": len(domains)})
                if domains and relabel is not None and t.topology_key != pts.LABEL_HOSTNAME:
                    relabel[t.topology_key] = domains[0][0]
                    choices.append((t.topology_key, [v for v, _ in domains[:5]]))
                else:
                    # no pod anywhere matches the term, or the domain is a node: no label on this node helps
                    relabel = None
            details["affinity"] = unmet
            change.set_labels = relabel or {}
            if relabel:
                self._pick_domains(change, ni, choices)
        # the pod's required anti-affinity: pods it must not share a domain with
        conflicts = []
        for t in s.required_anti:
            tv = labels.get(t.topology_key)
            if tv is None or s.anti_affinity_counts.get((t.topology_key, tv), 0) <= 0:
                continue
            pods = [(p, other.name) for other in self.cs.node_infos if other.node.labels.get(t.topology_key) == tv
                    for p in other.pods if ipa.term_matches(t, p, None)]
            conflicts.append({"topology_key": t.topology_key, "value": tv, "selector": selector_text(t.selector),
                              "pods": sorted(p.key for p, _ in pods)})
            for p, n in pods:
                evict.setdefault(p.key, Eviction(p.key, n, p.priority, p))
        if conflicts:
            details["anti_affinity"] = conflicts
        # existing pods whose required anti-affinity rejects the pod in this node's domains
        existing = []
        for other in self.cs.node_infos:
            for ep in other.pods_with_required_anti_affinity:
                for t in ep.affinity.required_anti:
                    tv = other.node.labels.get(t.topology_key)
                    if tv is None or labels.get(t.topology_key) != tv:
                        continue
                    if ipa.term_matches(t, self.pod, s.namespace_labels):
                        existing.append({"pod": ep.key, "node": other.name, "topology_key": t.topology_key,
                                         "value": tv, "selector": selector_text(t.selector)})
                        evict.setdefault(ep.key, Eviction(ep.key, other.name, ep.priority, ep))
                        break
        if existing:
            details["existing_anti_affinity"] = existing
        change.details = details
        change.evict = sorted(evict.values(), key=lambda e: (e.priority, e.pod))
        return change


    def _pick_domains(self, change: Change, ni: NodeInfo, choices: list[tuple[str, list[str]]]) -> None:
        """Try the domains with matching pods, most matches first, until one flips the checked verdict
        (another domain may hold pods whose anti-affinity rejects the pod)."""
        first = dict(change.set_labels)
        for key_, domains in choices:
            for domain in domains:
                change.set_labels[key_] = domain
                if self._check(change, ni.name):
                    return
            change.set_labels[key_] = first[key_]
        change.checked = False  # checked again with the evictions, if any, by the caller


def ports_clash(a: HostPort, b: HostPort) -> bool:
    """Whether two host ports collide (same protocol and port, overlapping IPs; 0.0.0.0 overlaps all)."""
    if (a.protocol or "TCP") != (b.protocol or "TCP") or a.port != b.port:
        return False
    ia, ib = a.ip or ZERO_IP, b.ip or ZERO_IP
    return ia == ZERO_IP or ib == ZERO_IP or ia == ib


def _allocatable(ni: NodeInfo, resource: str) -> int:
    a = ni.allocatable
    if resource == "pods":
        return a.allowed_pod_number
    if resource == "cpu":
        return a.milli_cpu
    if resource == "memory":
        return a.memory
    if resource == "ephemeral-storage":
        return a.ephemeral_storage
    return a.scalar.get(resource, 0)


def _contribution(p: Pod, resource: str) -> int:
    r = p.requests
    if resource == "pods":
        return 1
    if resource == "cpu":
        return r.milli_cpu
    if resource == "memory":
        return r.memory
    if resource == "ephemeral-storage":
        return r.ephemeral_storage
    return r.scalar.get(resource, 0)


def smallest_eviction(pods: list[Pod], need: dict[str, int]) -> list[Pod] | None:
    """The smallest set of lowest-priority pods whose requests cover ``need`` (resource -> amount), or None.

    Greedy by priority (lowest first), among equal priorities the pod that covers most of what is
    missing; then every pod that is not needed after all is given back, highest priority first.
    """
    if not need:
        return []
    missing = dict(need)
    chosen: list[Pod] = []
    left = list(pods)
    while any(v > 0 for v in missing.values()):
        if not left:
            return None

        def relief(p: Pod) -> float:
            return sum(min(_contribution(p, r), m) / m for r, m in missing.items() if m > 0)

        lowest = min(p.priority for p in left)
        pick = min((p for p in left if p.priority == lowest), key=lambda p: (-relief(p), p.key))
        left.remove(pick)
        if relief(pick) <= 0:
            continue
        chosen.append(pick)
        for r in missing:
            missing[r] -= _contribution(pick, r)
    for p in sorted(chosen, key=lambda p: (-p.priority, p.key)):
        rest = [q for q in chosen if q is not p]
        if all(sum(_contribution(q, r) for q in rest) >= m for r, m in need.items()):
            chosen = rest
    return sorted(chosen, key=lambda p: (p.priority, p.key))


# ---------------------------------------------------------------------------------------------- preemption
PREEMPTION_CRITERIA = CANDIDATE_CRITERIA  # the plugin's own list, in its order


@dataclass(slots=True)
class CandidateSummary:
    node: str
    victims: list[tuple[str, int]]  # (pod, priority), most important first
    pdb_violations: int
    top_priority: int
    priority_sum: int
    chosen: bool = False


@dataclass(slots=True)
class PreemptionReasoning:
    potential_nodes: int
    candidates: list[CandidateSummary]  # in dry-run order
    chosen: str
    runner_up: str | None
    decided_by: str  # the first criterion that put the chosen node ahead of the runner-up
    rejected: list[tuple[str, int]]  # why other nodes were no candidates: (reason, nodes)

    def to_dict(self) -> dict:
        return {"potential_nodes": self.potential_nodes, "chosen": self.chosen or None,
                "runner_up": self.runner_up, "decided_by": self.decided_by,
                "candidates": [{"node": c.node, "victims": [{"pod": p, "priority": pr} for p, pr in c.victims],
                                "pdb_violations": c.pdb_violations, "chosen": c.chosen} for c in self.candidates],
                "rejected": [{"reason": r, "nodes": n} for r, n in self.rejected]}


def preemption_reasoning(details: PreemptionDetails) -> PreemptionReasoning:
    """Why the dry run chose its node: upstream's ordered criteria, compared with the best other candidate."""
    def keys(c: Any) -> tuple[float, ...]:
        return candidate_key(c, details.bound_here)

    cands = []
    for c in details.candidates:
        top = c.victims[0].priority if c.victims else 0
        cands.append(CandidateSummary(c.node, [(v.key, v.priority) for v in c.victims], c.num_pdb_violations, top,
                                      sum(v.priority for v in c.victims), c.node == details.chosen))
    why = Counter(f"{st.plugin}: {_reason(st)}" if st.plugin else _reason(st) for st in details.node_statuses.values())
    rejected = sorted(why.items(), key=lambda kv: (-kv[1], kv[0]))
    chosen = next((c for c in details.candidates if c.node == details.chosen), None)
    runner_up, decided_by = None, ""
    if chosen is not None:
        best_level = -1
        ck = keys(chosen)
        for c in details.candidates:
            if c is chosen:
                continue
            k = keys(c)
            level = next((i for i in range(len(ck)) if ck[i] != k[i]), len(ck))
            if level > best_level or (level == best_level and runner_up is not None and c.node < runner_up):
                best_level, runner_up = level, c.node
        if runner_up is None:
            decided_by = "the only candidate"
        elif best_level < len(PREEMPTION_CRITERIA):
            decided_by = PREEMPTION_CRITERIA[best_level]
        else:
            decided_by = "a tie on every criterion, broken " + (
                "by the smallest node name" if details.chosen == min(details.tied or [details.chosen])
                else "at random")
    return PreemptionReasoning(len(details.potential_nodes), cands, details.chosen, runner_up, decided_by, rejected)


# ---------------------------------------------------------------------------------------------- explain run
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
