"""The HTML report (``--report FILE.html``): one self-contained file, readable offline.

Laid out by a jinja2 template (``templates/report.html.j2``); the charts are plotly figures whose JavaScript
is embedded, so the file needs no network when it is opened. Everything shown is read off the same
:class:`~pysched.report.summary.ReportData` the tables and JSON/YAML show, and off the cycle views of
``summary`` (filter matrix, scores, preemption): nothing is recomputed here.

The pods table and the drill-downs are data (one JSON island) that a few lines of script render page by
page, so 10,000 pods stay a file a browser opens in seconds.
"""

from __future__ import annotations

import html
import json
import re
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

from pysched import K8S_VERSION, __version__
from pysched.errors import InputError
from pysched.report import summary as sm
from pysched.report.document import OUTCOME_LABEL, cycle_fact_lines, verdict_text
from pysched.scheduler.simulation import SimulationResult
from pysched.scheduler.trace import CycleTrace

BARS_UP_TO = 60  # nodes: one bar group per node up to this many, a heat map beyond
TOP_REASONS = 15
DRILL_NODES = 12  # node names listed per filter group in a drill-down
DRILL_SCORES = 10  # score rows per cycle in a drill-down
METRICS = (("cpu", "cpu"), ("memory", "memory"), ("pods", "pods"))


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("pysched.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]),
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


@cache
def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _pct(u: sm.NodeUsage, metric: str) -> float | None:
    used, total = {"cpu": (u.milli_cpu, u.milli_cpu_allocatable), "memory": (u.memory, u.memory_allocatable),
                   "pods": (u.pods, u.pods_allocatable)}[metric]
    frac = sm.fraction(used, total)
    return None if frac is None else round(100 * frac, 1)


def _usage_figure(rows: list[sm.NodeUsage], what: str) -> dict:
    names = [u.name for u in rows]
    layout: dict[str, Any] = {"margin": {"l": 60, "r": 20, "t": 30, "b": 80}, "height": 360,
                              "legend": {"orientation": "h"}}
    data: list[dict[str, Any]]
    if len(rows) <= BARS_UP_TO:
        data = [{"type": "bar", "name": label, "x": names, "y": [_pct(u, m) for u in rows],
                 "hovertemplate": f"%{{x}}<br>{label}: %{{y}}%<extra></extra>"} for m, label in METRICS]
        layout.update(barmode="group", yaxis={"title": {"text": "% of allocatable requested"}, "range": [0, 100]},
                      xaxis={"title": {"text": what}, "type": "category"})
    else:
        data = [{"type": "heatmap", "x": names, "y": [label for _, label in METRICS],
                 "z": [[_pct(u, m) for u in rows] for m, _ in METRICS], "zmin": 0, "zmax": 100,
                 # light for free, dark red for full
                 "colorscale": [[0, "#f7fbff"], [0.5, "#fdae61"], [0.9, "#d7191c"], [1, "#67000d"]],
                 "colorbar": {"title": {"text": "%"}},
                 "hovertemplate": "%{x}<br>%{y}: %{z}%<extra></extra>"}]
        layout.update(xaxis={"title": {"text": f"{len(rows)} {what}s (by name)"}, "showticklabels": False},
                      height=260)
    return {"data": data, "layout": layout}


_AVAILABLE = re.compile(r"^\d+/\d+ nodes are available: ")
_TAIL = re.compile(r"\.? (no new claims to deallocate, )?preemption: .*$")


def _reason_label(message: str, width: int = 56) -> str:
    """The part of a FailedScheduling message that tells reasons apart, on at most two lines."""
    core = _TAIL.sub("", _AVAILABLE.sub("", message)) or message
    lines = textwrap.wrap(core, width, break_long_words=False) or [""]
    if len(lines) > 2:
        lines = [lines[0], lines[1][: width - 1] + "…"]
    return "<br>".join(html.escape(line) for line in lines)


def _reasons_figure(reasons: list[sm.ReasonCount]) -> dict:
    top = list(reversed(reasons[:TOP_REASONS]))  # plotly draws the first bar at the bottom
    labels = [f"{i}. {_reason_label(r.message)}" for i, r in zip(range(len(top), 0, -1), top, strict=True)]
    data = [{"type": "bar", "orientation": "h", "x": [r.count for r in top], "y": labels,
             "customdata": [r.message for r in top], "marker": {"color": "#c0392b"},
             "hovertemplate": "%{x} pods<br>%{customdata}<extra></extra>"}]
    layout = {"margin": {"l": 20, "r": 20, "t": 10, "b": 40}, "height": 80 + 44 * len(top),
              "xaxis": {"title": {"text": "pods"}, "dtick": 1 if top and top[-1].count < 10 else None},
              "yaxis": {"automargin": True}}
    return {"data": data, "layout": layout}


def _cycle_detail(c: CycleTrace) -> dict:
    d: dict[str, Any] = {"pass": c.pass_no, "outcome": c.outcome, "node": c.node or c.nominated_node,
                         "facts": cycle_fact_lines(c)}
    fm = sm.filter_matrix(c)
    if fm is not None:
        d["filter"] = {
            "nodes": fm.nodes, "plugins": fm.plugins, "passed": fm.passed, "skipped": fm.skipped,
            "groups": [{"count": len(g.nodes), "nodes": g.nodes[:DRILL_NODES], "result": g.result,
                        "verdicts": [verdict_text(g.verdicts[p]) if p in g.verdicts else "-" for p in fm.plugins]}
                       for g in fm.groups]}
    st = sm.score_table(c)
    if st is not None:
        d["scores"] = {"plugins": st.plugins, "feasible": len(st.rows),
                       "rows": [{"rank": r.rank, "node": r.node, "total": r.total, "selected": r.selected,
                                 "plugins": [r.plugins.get(p) for p in st.plugins]}
                                for r in st.rows[:DRILL_SCORES]]}
    pv = sm.preemption_view(c)
    if pv is not None:
        d["preemption"] = {"potential": pv.potential_nodes, "chosen": pv.chosen,
                           "candidates": [{"node": x.node, "victims": x.victims, "pdb": x.pdb_violations,
                                           "chosen": x.chosen} for x in pv.candidates[:DRILL_SCORES]]}
    return d


def _pods(result: SimulationResult, rows: list[sm.PodRow]) -> list[dict]:
    cycles: dict[str, list[CycleTrace]] = {}
    for c in result.cycles:
        if sm.traced(result, c.pod):
            cycles.setdefault(c.pod, []).append(c)
    out = []
    for r in rows:
        p: dict[str, Any] = {"i": r.index, "pod": r.pod, "prio": r.priority,
                             "outcome": OUTCOME_LABEL.get(r.outcome, r.outcome), "node": r.node or "",
                             "reason": r.reason}
        if r.victims:
            p["victims"] = r.victims
        if r.pod in cycles:
            p["cycles"] = [_cycle_detail(c) for c in cycles[r.pod]]
        out.append(p)
    return out


def _island(data: Any) -> str:
    """JSON safe inside a <script> element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_simulation_report(result: SimulationResult, data: sm.ReportData, *, title: str = "pysched simulate",
                             sources: list[str] | None = None) -> str:
    c = data.counts
    cards = [("pending pods simulated", c.simulated, ""), ("scheduled", c.scheduled, "ok"),
             ("unschedulable", c.unschedulable, "bad"), ("gated", c.gated, "warn"),
             ("nominated, still pending", c.nominated, "info"), ("preempting pods", c.preemptors, "info"),
             ("victims", c.victims, "info"), ("errors", c.errors, "bad"), ("not simulated", c.not_simulated, "warn")]
    charts = {"nodes": _usage_figure(data.nodes, "node")}
    if len(data.zones) > 1:
        charts["zones"] = _usage_figure(data.zones, "zone")
    if data.reasons:
        charts["reasons"] = _reasons_figure(data.reasons)
    traced = any(sm.traced(result, c.pod) for c in result.cycles)
    return _environment().get_template("report.html.j2").render(
        title=title, version=__version__, k8s_version=K8S_VERSION, sources=sources or [],
        profiles=", ".join(result.profiles), nodes=c.nodes, cards=cards, cycles=c.cycles, passes=c.passes,
        reasons=data.reasons[:TOP_REASONS], more_reasons=max(len(data.reasons) - TOP_REASONS, 0),
        zones=data.zones, traced=traced, charts_json=_island(charts), pods_json=_island(_pods(result, data.rows)),
        plotly_js=_plotly_js())


def write_report(path: str, html: str) -> None:
    try:
        Path(path).write_text(html, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot write the report {path}: {e.strerror or e}", field="--report") from None


def write_simulation_report(path: str, result: SimulationResult, data: sm.ReportData,
                            sources: list[str] | None = None) -> None:
    write_report(path, render_simulation_report(result, data, sources=sources))


# ---------------------------------------------------------------------------------------------- other commands
def _block_view(b: object) -> dict:
    from pysched.report.document import Heading, Table, Text

    if isinstance(b, Heading):
        return {"kind": "heading", "text": b.text, "level": b.level}
    if isinstance(b, Text):
        return {"kind": "text", "text": b.text, "style": b.style}
    assert isinstance(b, Table)
    return {"kind": "table", "title": b.title, "columns": b.columns, "rows": b.rows, "notes": b.notes,
            "show_header": b.show_header}


def render_document_report(title: str, blocks: list, charts: dict[str, tuple[str, dict]] | None = None,
                           sources: list[str] | None = None) -> str:
    """A command's ``-o table`` document (the same blocks the terminal shows) as one HTML file, with
    ``charts`` (name -> (title, plotly figure)) above it."""
    charts = charts or {}
    return _environment().get_template("document.html.j2").render(
        title=title, version=__version__, k8s_version=K8S_VERSION, sources=sources or [],
        blocks=[_block_view(b) for b in blocks], chart_titles=[(k, t) for k, (t, _) in charts.items()],
        charts_json=_island({k: fig for k, (_, fig) in charts.items()}), plotly_js=_plotly_js())


def diff_charts(view: Any) -> dict[str, tuple[str, dict]]:
    """Side by side: each node's requested/allocatable under A and under B, per resource."""
    names = sorted(set(view.a.nodes) | set(view.b.nodes))
    out: dict[str, tuple[str, dict]] = {}
    for metric in ("cpu", "memory", "pods"):
        data = []
        for label, side in (("A", view.a), ("B", view.b)):
            ys = []
            for n in names:
                u = side.nodes.get(n)
                f = u.fraction(metric) if u is not None else None
                ys.append(None if f is None else round(100 * f, 1))
            data.append({"type": "bar" if len(names) <= BARS_UP_TO else "scatter", "name": f"{label}: {side.config}",
                         "x": names, "y": ys, "hovertemplate": f"%{{x}}<br>{label} {metric}: %{{y}}%<extra></extra>"})
        layout = {"barmode": "group", "height": 320, "margin": {"l": 60, "r": 20, "t": 20, "b": 60},
                  "yaxis": {"title": {"text": f"{metric}: % of allocatable"}, "range": [0, 100]},
                  "xaxis": {"type": "category", "showticklabels": len(names) <= BARS_UP_TO},
                  "legend": {"orientation": "h"}}
        out[f"nodes-{metric}"] = (f"{metric} per node, A and B side by side", {"data": data, "layout": layout})
    return out


def capacity_charts(answer: Any) -> dict[str, tuple[str, dict]]:
    """Per template: how many copies land on each node."""
    out: dict[str, tuple[str, dict]] = {}
    for i, t in enumerate(answer.templates):
        if not t.per_node:
            continue
        rows = sorted(t.per_node.items(), key=lambda kv: (-kv[1], kv[0]))
        fig = {"data": [{"type": "bar", "x": [n for n, _ in rows], "y": [c for _, c in rows],
                         "hovertemplate": "%{x}: %{y} copies<extra></extra>"}],
               "layout": {"height": 300, "margin": {"l": 60, "r": 20, "t": 20, "b": 60},
                          "xaxis": {"type": "category", "showticklabels": len(rows) <= BARS_UP_TO},
                          "yaxis": {"title": {"text": "copies"}}}}
        out[f"copies-{i}"] = (f"{t.namespace}/{t.name}: {t.count} copies, per node", fig)
    return out
