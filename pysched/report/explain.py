"""``pysched explain POD``: every cycle of one pod, why it went where it went, and what would make it fit.

Everything here reads an :class:`~pysched.scheduler.explain.Explanation` (the pod's traced cycles and the
what-if computed by the scheduler layer); no decision is recomputed. ``explain_data`` is the JSON/YAML
document, ``build_explain_document`` the ``-o table`` blocks that ``table.py`` and ``plain.py`` draw.
"""

from __future__ import annotations

from typing import Any

from pysched.framework.status import Code
from pysched.report import summary as sm
from pysched.report.document import (
    BAD,
    DEFAULT_MAX_ROWS,
    DIM,
    INFO,
    OK,
    OUTCOME_STYLE,
    STRONG,
    WARN,
    Block,
    Cell,
    Column,
    Heading,
    Table,
    Text,
    _limit,
    _more,
    _plural,
    cycle_fact_lines,
    filter_block,
    score_block,
)
from pysched.scheduler.explain import (
    DEVICES,
    INTER_POD,
    NODE_AFFINITY,
    PORTS,
    RESOURCES,
    SPREAD,
    TAINTS,
    UNSCHEDULABLE,
    Change,
    Explanation,
    NodeSuggestion,
    PreemptionReasoning,
    WhatIf,
    preemption_reasoning,
)
from pysched.scheduler.trace import CycleTrace


# ---------------------------------------------------------------------------------------------- words
def fmt_amount(resource: str, value: int) -> str:
    """cpu in cores or millicores (``2``, ``250m``), memory and storage in binary units, others as numbers."""
    if resource == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return sm.fmt_bytes(value)
    return str(value)


def verdict_text(c: CycleTrace, gates: list[str] | None = None) -> str:
    """``bound to X``, ``nominated to X evicting V1, V2``, ``gated by G``, ``unschedulable``, ``error``."""
    if c.outcome == sm.SCHEDULED:
        return f"bound to {c.node}"
    if c.outcome == sm.NOMINATED:
        victims = ", ".join(c.victims or [])
        return f"nominated to {c.nominated_node}" + (f" evicting {victims}" if victims else " (no victim left to evict)")
    if c.outcome == sm.GATED:
        return f"gated by {', '.join(gates)}" if gates else "gated"
    if c.outcome == sm.UNSCHEDULABLE:
        return "unschedulable"
    if c.outcome == sm.ERROR:
        return "error"
    return c.outcome.lower() if c.outcome else "-"


def _evict_text(change: Change) -> str:
    return ", ".join(f"{e.pod} (priority {e.priority})" for e in change.evict)


def _labels_text(change: Change) -> str:
    """``labelling it k=v`` / ``removing its label k`` / both."""
    parts = []
    if change.set_labels:
        parts.append("labelling it " + ", ".join(f"{k}={v}" for k, v in sorted(change.set_labels.items())))
    if change.remove_labels:
        parts.append(f"removing its label{'s' if len(change.remove_labels) > 1 else ''} "
                     + ", ".join(change.remove_labels))
    return " and ".join(parts)


def _toleration_text(t: Any) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def change_text(change: Change, node: str) -> str:
    """One sentence (or a few, joined by ``; ``) for a change: the facts, then what would do."""
    d = change.details
    parts: list[str] = []
    would = ""
    if change.kind == RESOURCES:
        for row in d.get("short", []):
            res = row["resource"]
            if res == "pods":
                parts.append(f"holds {row['used']}/{row['allocatable']} pods: needs room for 1 more")
            elif row["exceeds_allocatable"]:
                largest = row.get("largest_allocatable")
                tail = f" (the largest on any node: {fmt_amount(res, largest)})" if largest is not None else ""
                parts.append(f"the pod requests {fmt_amount(res, row['requested'])} {res}, more than the node's "
                             f"allocatable {fmt_amount(res, row['allocatable'])}{tail}: no eviction makes room")
            else:
                parts.append(f"needs {fmt_amount(res, row['need'])} more {res} free "
                             f"({fmt_amount(res, row['free'])} of {fmt_amount(res, row['allocatable'])} free, "
                             f"requests {fmt_amount(res, row['requested'])})")
        if change.evict:
            would = f"evicting {_evict_text(change)} would do"
        elif d.get("no_eviction"):
            parts.append("evicting every pod on the node would not make room (nominated pods hold it)")
    elif change.kind == TAINTS:
        tols = " and ".join(_toleration_text(t) for t in change.add_tolerations)
        parts.append(f"needs a toleration for {tols}")
    elif change.kind == UNSCHEDULABLE:
        parts.append(f"cordoned: uncordon it (kubectl uncordon {node})")
    elif change.kind == NODE_AFFINITY:
        for m in d.get("node_selector", []):
            if m["have"] is None:
                parts.append(f"lacks label {m['key']}={m['want']} (nodeSelector)")
            else:
                parts.append(f"has {m['key']}={m['have']}, the nodeSelector wants {m['key']}={m['want']}")
        for which, label in (("pod_affinity", "required node affinity term"),
                             ("scheduler_affinity", "term of the profile's addedAffinity")):
            a = d.get(which)
            if a is None:
                continue
            if not a["fixable"]:
                parts.append(f"matches no {label}, and no label change makes it match one (the terms name "
                             "other nodes, or contradict themselves or the nodeSelector)")
            else:
                parts.append(f"matches no {label} ({a['terms']}); term {a['term'] + 1} needs "
                             f"{', '.join(a['unmet'])}")
        if change.set_labels or change.remove_labels:
            would = f"{_labels_text(change)} would do"
        n = d.get("matching_nodes", 0)
        if n:
            verb = "matches" if n == 1 else "match"
            parts.append(f"{_plural(n, 'node')} {verb}: {sm.fmt_list(d.get('matching_examples', []), 5)}")
        else:
            parts.append("no node matches")
    elif change.kind == PORTS:
        for p in d.get("ports", []):
            where = "" if p["ip"] == "0.0.0.0" else f" on {p['ip']}"
            holders = ", ".join(p["held_by"]) or "a pod nominated to the node"
            parts.append(f"port {p['protocol']}/{p['port']}{where} is held by {holders}")
        if change.evict:
            would = f"evicting {_evict_text(change)} would do"
    elif change.kind == SPREAD:
        for row in d.get("constraints", []):
            if row.get("satisfied"):
                continue
            key = row["topology_key"]
            ok = ", ".join(f"{key}={v} ({n})" for v, n in row["ok_domains"])
            more = row["ok_domains_count"] - len(row["ok_domains"])
            ok_text = (f"{ok}{f' +{more} more' if more > 0 else ''} would satisfy maxSkew {row['max_skew']}"
                       if ok else f"no {key} domain satisfies maxSkew {row['max_skew']}")
            if row.get("missing_label"):
                parts.append(f"lacks label {key} (topology spread constraint on {row['selector']}); {ok_text}")
                continue
            if row["min_domain"] is None:
                least = f"fewer than minDomains {row['min_domains']} domains, so the minimum is 0"
            else:
                least = f"the minimum is {row['min']} ({key}={row['min_domain']})"
            parts.append(f"{key}={row['value']} has {_plural(row['count'], 'pod')} matching {row['selector']}, "
                         f"{least}: skew {row['skew']} > maxSkew {row['max_skew']}; {ok_text}")
        if change.evict:
            would = f"evicting {_evict_text(change)} would do"
        elif change.set_labels:
            would = f"{_labels_text(change)} would do"
    elif change.kind == INTER_POD:
        for a in d.get("affinity", []):
            key = a["topology_key"]
            where = f"its {key}={a['value']}" if a["value"] is not None else f"any {key} (it lacks the label)"
            doms = ", ".join(f"{key}={v} ({n})" for v, n in a["domains_with_matches"])
            found = f"matching pods run in {doms}: nodes there satisfy it" if doms else "no pod anywhere matches"
            parts.append(f"affinity: no pod matching {a['selector']} in {where}; {found}")
        for a in d.get("anti_affinity", []):
            parts.append(f"anti-affinity ({a['selector']}): conflicts with {sm.fmt_list(a['pods'], 5)} in "
                         f"{a['topology_key']}={a['value']}")
        for a in d.get("existing_anti_affinity", []):
            parts.append(f"{a['pod']} (on {a['node']}) has required anti-affinity against it "
                         f"({a['selector']}) in {a['topology_key']}={a['value']}")
        if change.evict and change.set_labels:
            would = f"evicting {_evict_text(change)} and {_labels_text(change)} would do"
        elif change.evict:
            would = f"evicting {_evict_text(change)} would do"
        elif change.set_labels:
            would = f"{_labels_text(change)} would do"
    elif change.kind == DEVICES:
        parts.extend(_devices_text(d))
        if not parts:
            parts.append(change.reason)
    else:
        parts.append(f"{change.reason} (no what-if for {change.plugin})")
    if would:
        if change.checked and not change.flips:
            would = would.removesuffix(" would do") + " is not enough"
        parts.append(would)
    return "; ".join(parts)


_DEVICE_PROBLEMS = {
    "no-class-device": "no device of the class on the node",
    "selector-false": "the selectors are false for every device of the class",
    "count-too-high": "not enough free devices",
}


def _devices_text(d: dict) -> list[str]:
    """DynamicResources on one node: the failing requests, then the claims holding the devices."""
    parts = []
    if d.get("error"):
        parts.append(d["error"])
    for row in d.get("claims", []):
        problem = row.get("problem")
        if problem == "allocated-elsewhere":
            parts.append(f"claim {row['claim']} is allocated to devices another node reaches")
        elif problem == "constraint":
            parts.append(f"claim {row['claim']}: every request has devices, but {row['constraint']} cannot be "
                         "met by free devices together")
        elif problem in _DEVICE_PROBLEMS:
            need = "every device" if row["need"] == "all" else _plural(row["need"], "device")
            parts.append(f"claim {row['claim']} request {row['request']} needs {need} of class {row['class']}: "
                         f"{_DEVICE_PROBLEMS[problem]} ({row['of_class']} of the class, {row['selectable']} "
                         f"selected, {row['free']} free)")
    holders = d.get("holders", [])
    if holders:
        held = ", ".join(f"{h['claim']} ({'reserved for ' + ', '.join(h['pods']) if h['pods'] else 'reserved for nobody'})"
                         for h in holders[:5])
        more = f" +{len(holders) - 5} more" if len(holders) > 5 else ""
        parts.append(f"devices it could use are held by {held}{more}: deallocating those claims would free them")
    return parts


def check_text(change: Change) -> tuple[str, str]:
    if not change.has_modification:
        return "-", DIM
    if change.flips:
        return "checked: passes", OK
    return f"checked: still fails ({change.after})" if change.after else "checked: still fails", BAD


# ---------------------------------------------------------------------------------------------- data
def score_summary(c: CycleTrace) -> dict | None:
    """The winner, the runner-up and the per-plugin differences between them (from the trace's scores)."""
    st = sm.score_table(c)
    if st is None or not st.rows or c.node is None:
        return None
    winner = next((r for r in st.rows if r.node == c.node), None)
    if winner is None:
        return None
    others = [r for r in st.rows if r.node != c.node]
    out: dict[str, Any] = {"winner": winner.node, "winner_total": winner.total, "runner_up": None,
                           "runner_up_total": None, "margin": None, "differences": {}, "tie": False}
    if others:
        ru = others[0]
        diffs = {p: winner.plugins.get(p, 0) - ru.plugins.get(p, 0) for p in st.plugins}
        diffs = {p: d for p, d in sorted(diffs.items(), key=lambda kv: (-abs(kv[1]), kv[0])) if d}
        out.update(runner_up=ru.node, runner_up_total=ru.total, margin=winner.total - ru.total,
                   differences=diffs, tie=winner.total == ru.total)
    return out


def explain_data(e: Explanation) -> dict:
    """The ``-o json|yaml`` document: the cycles in the conformance schema plus the explain sections."""
    cycles = []
    for c in e.cycles:
        d = c.to_dict(True)
        d["score_summary"] = score_summary(c)
        d["preemption"] = preemption_reasoning(c.preemption).to_dict() if c.preemption is not None else None
        cycles.append(d)
    last = e.cycles[-1] if e.cycles else None
    verdict: dict[str, Any] = {"outcome": last.outcome if last else None, "text": verdict_text(last, e.gates)
                               if last else "not simulated"}
    if last is not None:
        verdict["node"] = last.node
        verdict["message"] = last.message
        if last.outcome == sm.NOMINATED:
            verdict["nominated_node"] = last.nominated_node
            verdict["victims"] = list(last.victims or [])
    return {"pod": e.pod, "priority": last.priority if last else None, "profile": last.profile if last else None,
            "nodes": e.nodes, "verdict": verdict, "cycles": cycles,
            "suggestions": e.whatif.to_dict() if e.whatif is not None else None}


# ---------------------------------------------------------------------------------------------- blocks
def build_explain_document(e: Explanation, *, all_nodes: bool = False,
                           max_rows: int = DEFAULT_MAX_ROWS) -> list[Block]:
    last = e.cycles[-1] if e.cycles else None
    if last is None:
        return [Heading(f"Explain {e.pod}"), Text("the pod had no scheduling cycle", WARN)]
    head = f"Explain {e.pod} (priority {last.priority}, profile {last.profile or '-'}, {_plural(e.nodes, 'node')})"
    blocks: list[Block] = [Heading(head)]
    style = OUTCOME_STYLE.get(last.outcome or "", "")
    blocks.append(Text(f"verdict: {verdict_text(last, e.gates)} "
                       f"(after {_plural(len(e.cycles), 'cycle')}, pass {last.pass_no})", style))
    final = sm.cycle_reason(last)
    if final:
        label = "FailedScheduling" if last.outcome in (sm.UNSCHEDULABLE, sm.NOMINATED) else last.outcome
        blocks.append(Text(f"{label}: {final}"))
    if last.outcome == sm.GATED and e.gates:
        blocks.append(Text(f"it enters scheduling once {'its gates are' if len(e.gates) > 1 else 'the gate is'} "
                           "removed from spec.schedulingGates"))
    for c in e.cycles:
        blocks.extend(cycle_blocks(c, e.gates, all_nodes=all_nodes, max_rows=max_rows))
    if e.whatif is not None:
        blocks.extend(whatif_blocks(e.whatif, last, max_rows))
    return blocks


def cycle_blocks(c: CycleTrace, gates: list[str], *, all_nodes: bool, max_rows: int) -> list[Block]:
    out: list[Block] = [Heading(f"pass {c.pass_no}: {verdict_text(c, gates)}", 2)]
    out.extend(Text(line) for line in cycle_fact_lines(c))
    fm = sm.filter_matrix(c)
    if fm is not None:
        if all_nodes:
            fm = sm.FilterMatrix(fm.nodes, fm.plugins, [sm.FilterGroup([n], g.result, g.verdicts)
                                                         for g in fm.groups for n in g.nodes], fm.passed, fm.skipped)
            table = filter_block(fm, 0)
            table.title = f"Filter verdicts on {_plural(fm.nodes, 'node')} (one row per node)"
            out.append(table)
        else:
            out.append(filter_block(fm, max_rows))
    st = sm.score_table(c)
    if st is not None:
        out.append(score_block(st, max_rows))
        summary = score_summary(c)
        if summary is not None:
            out.append(Text(score_summary_text(summary), STRONG))
    elif c.feasible is not None and len(c.feasible) == 1 and not c.fast_path:
        out.append(Text(f"one feasible node ({c.feasible[0]}): scoring skipped"))
    if c.preemption is not None:
        pr = preemption_reasoning(c.preemption)
        resolvable = any(st.code == Code.Unschedulable for st in c.filter.values())
        if not pr.potential_nodes and resolvable and c.postfilter_status is not None:
            reasons = [r.removeprefix("preemption: ") for r in c.postfilter_status.reasons
                       if r.startswith("preemption: ")] or c.postfilter_status.reasons
            out.append(Text(f"preemption not attempted: {', '.join(reasons)}"))
        else:
            out.extend(preemption_blocks(pr, max_rows))
    return out


def score_summary_text(s: dict) -> str:
    if s["runner_up"] is None:
        return f"winner: {s['winner']} (total {s['winner_total']}), the only feasible node scored"
    text = (f"winner: {s['winner']} (total {s['winner_total']}); runner-up: {s['runner_up']} "
            f"(total {s['runner_up_total']})")
    if s["tie"]:
        return text + "; equal totals: the tie-break chose the winner"
    diffs = ", ".join(f"{p} {d:+d}" for p, d in s["differences"].items())
    return text + f"; margin {s['margin']}: {diffs}"


def preemption_blocks(pr: PreemptionReasoning, max_rows: int) -> list[Block]:
    if not pr.candidates and not pr.potential_nodes:
        return [Text("preemption: no node rejected the pod as Unschedulable (only as unresolvable), so evicting "
                     "pods cannot help")]
    if not pr.candidates:
        out: list[Block] = [Text(f"preemption dry run on {_plural(pr.potential_nodes, 'node')} (those that rejected "
                                 "the pod as Unschedulable): no candidate")]
        out.extend(Text(f"  {_plural(n, 'node')}: {why}") for why, n in _limit(pr.rejected, max_rows)[0])
        return out
    shown, hidden = _limit(pr.candidates, max_rows)
    rows = []
    for c in shown:
        victims = ", ".join(f"{p} ({prio})" for p, prio in c.victims[:5])
        if len(c.victims) > 5:
            victims += f" +{len(c.victims) - 5} more"
        rows.append([Cell(c.node, OK if c.chosen else ""), Cell(str(len(c.victims))), Cell(victims),
                     Cell(str(c.top_priority)), Cell(str(c.pdb_violations)),
                     Cell("chosen" if c.chosen else "", OK if c.chosen else "")])
    notes = [f"{_plural(n, 'other node')}: {why}" for why, n in pr.rejected]
    if hidden:
        notes.append(_more(hidden, "candidates"))
    title = (f"Preemption dry run on {_plural(pr.potential_nodes, 'node')} (those that rejected the pod as "
             f"Unschedulable): {_plural(len(pr.candidates), 'candidate')}")
    table = Table(title, [Column("node", key=True), Column("victims", "right", wrap=False),
                          Column("pods (priority)"), Column("top victim priority", "right"),
                          Column("PDB violations", "right"), Column("", wrap=False)], rows, notes)
    if pr.runner_up is None:
        why = f"chosen: {pr.chosen}, {pr.decided_by}"
    elif pr.decided_by.startswith("tie"):
        why = f"chosen: {pr.chosen} over {pr.runner_up}: {pr.decided_by}"
    else:
        why = f"chosen: {pr.chosen} over {pr.runner_up}, decided by {pr.decided_by}"
    return [table, Text(why, INFO)]


def whatif_blocks(w: WhatIf, last: CycleTrace, max_rows: int) -> list[Block]:
    out: list[Block] = [Heading(f"What would make it fit (in the state of pass {last.pass_no})")]
    if w.prefilter_reject:
        out.append(Text(f"PreFilter rejects the pod before any node is filtered: {w.prefilter_reject}; "
                        "no change to a node helps", BAD))
        return out
    if w.prefilter_narrowed_by:
        out.append(Text(f"PreFilter of {', '.join(w.prefilter_narrowed_by)} allows {_plural(w.candidates, 'node')} "
                        f"of {w.nodes}"))
    if w.feasible_now:
        out.append(Text(f"passing every filter in this state: {sm.fmt_list(w.feasible_now, 5)}", OK))
    if not w.suggestions:
        if not w.feasible_now:
            out.append(Text("no node was evaluated", DIM))
        return out
    out.append(suggestions_table(w.suggestions, max_rows))
    return out


def _after_text(s: NodeSuggestion) -> tuple[str, str]:
    if not any(c.has_modification for c in s.changes):
        return "no change found", DIM
    if s.fits_after:
        return "with these changes it fits (checked)", OK
    still = "; ".join(f"{p}: {r}" for p, r in s.still_failing.items())
    return f"with these changes it still fails: {still}", BAD


def suggestions_table(suggestions: list[NodeSuggestion], max_rows: int) -> Table:
    rows: list[list[Cell]] = []
    for s in suggestions:
        after, after_style = _after_text(s)
        for i, c in enumerate(s.changes):
            check, check_style = check_text(c)
            rows.append([Cell(s.node if i == 0 else "", STRONG if i == 0 else ""), Cell(c.plugin),
                         Cell(change_text(c, s.node)), Cell(check, check_style)])
        rows.append([Cell(""), Cell(""), Cell(after, after_style), Cell("")])
    title = (f"The {_plural(len(suggestions), 'node')} with the fewest failing filters: the smallest change per "
             "filter, each checked by running PreFilter and Filter again on a modified copy")
    return Table(title, [Column("node", key=True), Column("filter", wrap=False), Column("what would make it fit"),
                         Column("check")], rows)

