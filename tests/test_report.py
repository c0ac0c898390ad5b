"""The ``-o table`` renderers: the views read off the demo simulation, the rich/plain/GitHub layouts, goldens.

Golden files live in ``tests/golden/``. After an intended change of the output, regenerate them with

    PYSCHED_UPDATE_GOLDEN=1 python -m pytest tests/test_report.py tests/test_cli.py

and review the diff (``git diff tests/golden``) before committing. The rich golden is rendered with
``Console(width=120, force_terminal=False, color_system=None)``; trailing blanks of its lines are stripped
before the comparison (rich pads every table line to the column widths).
"""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console

from pysched.framework.config import load_config
from pysched.framework.status import Code, Status
from pysched.plugins import in_tree_registry
from pysched.report import document as doc, summary as sm
from pysched.report.plain import render_plain
from pysched.report.progress import DelayedProgress
from pysched.report.table import render_simulation
from pysched.scheduler.simulation import Simulation, SimulationOptions, SimulationResult
from pysched.scheduler.trace import CycleTrace, Outcome
from pysched.snapshot.loader import load_snapshot
from tests.golden import assert_golden

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "demo.yaml"
ETL_MESSAGE = ("0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu. "
               "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful "
               "for scheduling.")
TRAINER2_MESSAGE = ("0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 node(s) didn't "
                    "match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are "
                    "available: 4 Preemption is not helpful for scheduling.")


def simulate(path: Path = DEMO, *, trace_pods: set[str] | None = None, trace: bool = False) -> SimulationResult:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    opts = SimulationOptions(trace=trace or trace_pods is not None, trace_pods=trace_pods)
    return Simulation(load_snapshot([str(path)]), cfg, registry, opts).run()


@pytest.fixture(scope="module")
def demo() -> SimulationResult:
    return simulate(trace=True)


def rich_text(result: SimulationResult, **kw: int) -> str:
    console = Console(file=io.StringIO(), width=120, force_terminal=False, color_system=None)
    render_simulation(result, console, **kw)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def cycles_of(result: SimulationResult, pod: str) -> list[CycleTrace]:
    return [c for c in result.cycles if c.pod == pod]


# ---------------------------------------------------------------------------------------------- views
def test_pod_rows_follow_the_queue_and_keep_each_pods_story(demo: SimulationResult) -> None:
    rows = {r.pod: r for r in sm.pod_rows(demo)}
    assert [r.pod for r in sm.pod_rows(demo)] == [
        "shop/checkout-1", "shop/web-1", "shop/web-2", "ml/trainer-1", "ml/trainer-2", "shop/etl-1",
        "shop/canary-1"]
    checkout = rows["shop/checkout-1"]
    assert (checkout.index, checkout.outcome, checkout.node, checkout.last_pass) == (1, "Scheduled", "node-1", 2)
    assert (checkout.victims, checkout.preempted_in, checkout.priority) == (["shop/report-1"], [1], 100000)
    assert (rows["shop/etl-1"].outcome, rows["shop/etl-1"].reason) == ("Unschedulable", ETL_MESSAGE)
    assert rows["shop/canary-1"].outcome == "Gated"
    assert rows["shop/canary-1"].reason == "SchedulingGates: waiting for scheduling gates: [example.com/approval]"
    assert (rows["ml/trainer-1"].node, rows["shop/web-2"].node) == ("node-4", "node-2")


def test_summary_counts(demo: SimulationResult) -> None:
    s = sm.summarize(demo)
    assert (s.simulated, s.scheduled, s.unschedulable, s.gated, s.nominated, s.errors) == (7, 4, 2, 1, 0, 0)
    assert (s.preemptors, s.victims, s.not_simulated, s.ignored) == (1, 1, 0, 0)
    assert (s.nodes, s.cycles, s.passes, s.profiles) == (4, 11, 2, ["default-scheduler"])


def test_reason_histogram_groups_by_final_message(demo: SimulationResult) -> None:
    hist = sm.reason_histogram(sm.pod_rows(demo))
    assert [(r.count, r.message, r.pods) for r in hist] == [
        (1, ETL_MESSAGE, ["shop/etl-1"]), (1, TRAINER2_MESSAGE, ["ml/trainer-2"])]
    rows = [sm.PodRow(i, f"ns/p{i}", 0, "Unschedulable", reason="b" if i % 3 else "a") for i in range(1, 7)]
    rows.append(sm.PodRow(7, "ns/p7", 0, "Scheduled", node="n"))
    assert [(r.message, r.count) for r in sm.reason_histogram(rows)] == [("b", 4), ("a", 2)]


def test_node_usage_after_the_simulation(demo: SimulationResult) -> None:
    usage = {u.name: u for u in sm.node_usage(demo)}
    assert list(usage) == ["node-1", "node-2", "node-3", "node-4"]
    n1 = usage["node-1"]  # report-1 preempted; checkout-1 (3.5 cores) and web-1 (0.5) bound
    assert (n1.pods, n1.milli_cpu, n1.milli_cpu_allocatable, n1.memory) == (2, 4000, 4000, 3 * 2**30)
    assert n1.pods_allocatable == 110 and n1.memory_allocatable == 16 * 2**30
    assert usage["node-4"].scalar == {"example.com/gpu": (1, 2)}
    assert usage["node-1"].scalar == {}
    total = sm.total_usage(list(usage.values()))
    assert (total.pods, total.milli_cpu, total.milli_cpu_allocatable) == (6, 10500, 16000)
    assert total.scalar == {"example.com/gpu": (1, 2)}


@pytest.mark.parametrize(("pairs", "expected"), [
    ([(1, 3), (1, 3), (2, 3)], [0.3333, 0.3333, 0.6667]),
    ([(0, 5), (-1, 10**400), (0, 5)], [0.0, -0.0, 0.0]),  # a quotient of -0.0 is not the key of 0.0
    ([(4, 0), (4, 0), (0, -1)], [None, None, None]),
    ([(10**17, 1), (10**17, 1)], [1e17, 1e17]),
], ids=["repeated", "signed-zero", "no-allocatable", "large"])
def test_usage_fractions_kept_across_rows_are_those_rounded_per_row(pairs: list[tuple[int, int]],
                                                                   expected: list[float | None]) -> None:
    rows = [sm.NodeUsage(f"n{i}", used, total, 0, 1, 0, 1) for i, (used, total) in enumerate(pairs)]
    rounded: dict[tuple[int, int], float] = {}
    got = [u.to_dict(rounded)["pods"]["fraction"] for u in rows]
    alone = [u.to_dict()["pods"]["fraction"] for u in rows]
    assert [repr(f) for f in got] == [repr(f) for f in alone] == [repr(f) for f in expected]


def test_filter_matrix_groups_nodes_with_identical_verdicts(demo: SimulationResult) -> None:
    first = cycles_of(demo, "shop/checkout-1")[0]
    fm = sm.filter_matrix(first)
    assert fm is not None
    assert fm.nodes == 4
    assert fm.plugins == ["TaintToleration", "NodeResourcesFit"]
    assert fm.passed == ["NodeUnschedulable", "NodeName"]
    assert "DynamicResources" in fm.skipped and "NodeResourcesFit" not in fm.skipped
    assert [(g.nodes, g.result) for g in fm.groups] == [
        (["node-1", "node-2", "node-3"], "rejected by NodeResourcesFit"), (["node-4"], "rejected by TaintToleration")]
    fit = fm.groups[0].verdicts["NodeResourcesFit"]
    assert (fit.code, fit.reasons) == (Code.Unschedulable, ["Insufficient cpu"])
    # the second cycle went straight to the nominated node: no matrix
    assert sm.filter_matrix(cycles_of(demo, "shop/checkout-1")[1]) is None


def test_filter_matrix_marks_feasible_and_not_evaluated_nodes() -> None:
    ok, skip = Status(Code.Success), Status(Code.Skip)
    no = Status(Code.Unschedulable, "Insufficient cpu", plugin="NodeResourcesFit")
    c = CycleTrace(1, "ns/p", 0, outcome="Scheduled", node="a")
    c.filter_all = {"c": {"Fit": ok, "Skipper": skip}, "a": {"Fit": ok, "Skipper": skip},
                    "b": {"Fit": no, "Skipper": skip}, "d": {"Fit": ok, "Skipper": skip}}
    c.filter = {"b": no}
    c.feasible = ["a", "c"]
    fm = sm.filter_matrix(c)
    assert fm is not None and fm.skipped == ["Skipper"] and fm.plugins == ["Fit"]
    assert [(g.nodes, g.result) for g in fm.groups] == [
        (["a", "c"], "feasible"), (["b"], "rejected by NodeResourcesFit"), (["d"], "not evaluated")]


def test_score_table_ranks_and_marks_the_selected_node(demo: SimulationResult) -> None:
    web1 = cycles_of(demo, "shop/web-1")[0]
    st = sm.score_table(web1)
    assert st is not None
    assert st.plugins == ["TaintToleration", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality"]
    assert [(r.rank, r.node, r.total, r.selected) for r in st.rows] == [
        (1, "node-1", 498, True), (2, "node-3", 442, False), (3, "node-2", 423, False)]
    assert st.rows[0].plugins == {"TaintToleration": 300, "NodeResourcesFit": 90,
                                  "NodeResourcesBalancedAllocation": 96, "ImageLocality": 12}
    tie = CycleTrace(1, "ns/p", 0, outcome="Scheduled", node="b",
                     scores={"c": {"X": 5}, "b": {"X": 7}, "a": {"X": 7}, "d": {"X": 1}})
    tst = sm.score_table(tie)
    assert tst is not None
    assert [(r.rank, r.node, r.selected) for r in tst.rows] == [
        (1, "a", False), (1, "b", True), (3, "c", False), (4, "d", False)]
    assert sm.score_table(cycles_of(demo, "ml/trainer-1")[0]) is None  # one feasible node: no scoring


def test_preemption_view(demo: SimulationResult) -> None:
    pv = sm.preemption_view(cycles_of(demo, "shop/checkout-1")[0])
    assert pv is not None
    assert (pv.potential_nodes, pv.chosen, pv.tied) == (3, "node-1", ["node-1", "node-2", "node-3"])
    assert [(c.node, c.victims, c.chosen) for c in pv.candidates] == [
        ("node-1", ["shop/report-1"], True), ("node-2", ["shop/report-2"], False),
        ("node-3", ["shop/cache-1"], False)]


def test_not_simulated_ignored_and_error_rows(demo: SimulationResult) -> None:
    err = CycleTrace(1, "shop/broken-1", 7, outcome="Error", error="plugin X failed", message="plugin X failed")
    result = replace(demo, cycles=[*demo.cycles, err],
                     not_simulated=[("shop/zz-pvc", "uses PersistentVolumeClaims"), ("shop/aa-pvc", "uses claims")],
                     ignored_pods=[("shop/other", "schedulerName 'other' has no profile")])
    rows = sm.pod_rows(result)
    assert [(r.pod, r.outcome) for r in rows[-4:]] == [
        ("shop/broken-1", "Error"), ("shop/aa-pvc", "NotSimulated"), ("shop/zz-pvc", "NotSimulated"),
        ("shop/other", "Ignored")]
    assert rows[-4].reason == "plugin X failed" and rows[-4].index == 8
    s = sm.summarize(result)
    assert (s.simulated, s.errors, s.not_simulated, s.ignored) == (8, 1, 2, 1)
    text = render_plain(result)
    assert "Not simulated" in text and "uses PersistentVolumeClaims" in text and "ignored" in text


def test_formatting_helpers() -> None:
    assert [sm.fmt_cpu(m) for m in (4000, 3500, 250, 1, 0)] == ["4", "3.5", "0.25", "0.001", "0"]
    assert [sm.fmt_bytes(b) for b in (16 * 2**30, 3 * 2**29, 128 * 2**20, 1536, 512)] == [
        "16Gi", "1.5Gi", "128Mi", "1.5Ki", "512"]
    assert [sm.fmt_pct(u, t) for u, t in ((3999, 4000), (1, 0), (2, 110), (1, 300), (0, 5), (7, 8), (4, 4))] == [
        "99%", "-", "2%", "<1%", "0%", "88%", "100%"]
    assert sm.fmt_list(["a", "b", "c", "d", "e"]) == "a, b, c +2 more"
    assert sm.fmt_list(["a", "b"]) == "a, b"


# ---------------------------------------------------------------------------------------------- layouts
def test_rich_golden_with_trace() -> None:
    result = simulate(trace_pods={"shop/checkout-1", "shop/web-1"})
    text = rich_text(result)
    assert_golden("report_demo_rich.txt", text)
    assert "\x1b" not in text
    assert text == rich_text(simulate(trace_pods={"shop/checkout-1", "shop/web-1"}))


def test_rich_report_content(demo: SimulationResult) -> None:
    text = rich_text(demo, max_rows=0)
    assert "─" in text and "█" in text  # rules and bars
    assert "preempted shop/report-1 in pass 1; bound in pass 2" in text
    assert "Trace of 7 pods" in text


def test_plain_report_has_no_boxes_and_no_trailing_blanks(demo: SimulationResult) -> None:
    text = render_plain(demo, width=1000)
    assert not set(text) & set("─│┃━┏┓└┘█░")
    assert all(line == line.rstrip() for line in text.splitlines())
    etl_row = next(line for line in text.splitlines() if line.split()[:2] == ["6", "shop/etl-1"])
    assert etl_row.split()[:5] == ["6", "shop/etl-1", "100", "Unschedulable", "-"]
    assert etl_row.endswith(ETL_MESSAGE)  # one line per row, whole message: greps cleanly


def test_github_report_is_markdown(demo: SimulationResult) -> None:
    text = render_plain(demo, "github")
    assert "## Trace of 7 pods" in text and "### shop/checkout-1 (priority 100000)" in text
    assert "#### pass 1: Nominated to node-1, preempting shop/report-1" in text
    lines = text.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("|   # | pod")))
    assert lines[header - 1] == "" and lines[header + 1].startswith("|-----|")
    assert any(line.startswith("|   7 | shop/canary-1 ") and "| Gated " in line for line in lines)
    with pytest.raises(ValueError):
        render_plain(demo, "html")


def test_max_rows_truncates_every_long_table(demo: SimulationResult) -> None:
    text = render_plain(demo, max_rows=2)
    assert "... 5 more pods not shown (--max-rows 0 shows all)" in text
    assert "... 2 more nodes not shown (--max-rows 0 shows all)" in text
    assert "more pods not shown" not in render_plain(demo, max_rows=0)
    pods_table = next(b for b in doc.build_document(demo, 3) if isinstance(b, doc.Table) and "queue order" in b.title)
    assert [r[1].text for r in pods_table.rows] == ["shop/checkout-1", "shop/web-1", "shop/web-2"]


def test_document_has_summary_histogram_nodes_pods_in_order(demo: SimulationResult) -> None:
    titles = [b.title for b in doc.build_document(simulate()) if isinstance(b, doc.Table)]
    assert [t.split(" ")[0] for t in titles] == ["Summary:", "Unschedulable", "Node", "Zone", "Pods"]
    assert not [b for b in doc.build_document(simulate()) if isinstance(b, doc.Heading)]  # no trace asked


# ---------------------------------------------------------------------------------------------- progress
def test_delayed_progress_appears_only_after_the_delay() -> None:
    now = [100.0]
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    with DelayedProgress(console, delay=1.0, clock=lambda: now[0]) as progress:
        progress(1, 10)
        assert not progress.shown
        now[0] = 101.5
        progress(2, 10)
        assert progress.shown
        now[0] = 101.55
        progress(12, 12)  # pass 2 grows the total; the last cycle always updates
        task = progress.progress.tasks[0]  # type: ignore[union-attr]
        assert (task.completed, task.total) == (12, 12)
    assert "scheduling cycles" in console.file.getvalue()  # type: ignore[attr-defined]


def test_delayed_progress_draws_nothing_for_short_runs() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    with DelayedProgress(console, delay=60.0) as progress:
        for i in range(1, 50):
            progress(i, 49)
    assert not progress.shown
    assert console.file.getvalue() == ""  # type: ignore[attr-defined]


@pytest.mark.parametrize(("pairs", "checked"), [
    ([(1, 3), (2, 3), (0, 5)], True),
    ([(4, 0), (0, -1)], True),
    ([(1, 3), (10**17, 1)], False),  # 1e+17: the standard library writes it, to_json walks the summary
    ([], True),
], ids=["fractions", "no-allocatable", "large", "no-nodes"])
def test_json_summary_checked_when_its_fractions_are_plain(pairs: list[tuple[int, int]], checked: bool) -> None:
    from pysched.report.serialize import Checked, to_json

    nodes = [sm.NodeUsage(f"n{i}", used, total, 0, 1, 0, 1, zone=f"z{i % 2}") for i, (used, total) in enumerate(pairs)]
    data = sm.ReportData(sm.Summary(), [], nodes, sm.zone_usage(nodes))
    got = data.to_json_dict()
    assert isinstance(got, Checked) is checked
    assert got == data.to_dict()
    assert to_json({"summary": got}) == to_json({"summary": data.to_dict()})


def _cycle(pass_no: int, pod: str, outcome: str | None, *, victims: list[str] | None = None,
           message: str | None = None, gate: bool = False) -> CycleTrace:
    return CycleTrace(pass_no, pod, 0, outcome=Outcome(outcome) if outcome else None, message=message,
                      node="n1" if outcome == "Scheduled" else None, victims=victims,
                      nominated_node="n2" if outcome == "Nominated" else None,
                      preenqueue_reject=Status(Code.UnschedulableAndUnresolvable, "gated", plugin="SchedulingGates")
                      if gate else None)


TALLIES = {
    "one-cycle-each": ([_cycle(1, "a", "Scheduled"), _cycle(1, "b", "Unschedulable", message="no fit"),
                        _cycle(1, "c", "Unschedulable", message="no fit"), _cycle(1, "d", "Gated", gate=True)],
                       [], []),
    "later-cycles": ([_cycle(1, "a", "Unschedulable", message="x"), _cycle(1, "b", "Scheduled"),
                      _cycle(2, "a", "Scheduled"), _cycle(2, "c", "Unschedulable", message="y"),
                      _cycle(3, "c", "Unschedulable", message="z")], [], []),
    "preemption": ([_cycle(1, "a", "Nominated", victims=["v1", "v2", "v1"]), _cycle(2, "a", "Nominated", victims=["v2", "v3"]),
                    _cycle(3, "a", "Scheduled"), _cycle(1, "b", "Nominated", victims=None),
                    _cycle(1, "c", "Nominated", victims=["v1"])], [], []),
    "errors-and-none": ([_cycle(1, "a", "Error", message="boom"), _cycle(1, "b", None),
                         _cycle(1, "c", "Waiting")], [], []),
    "not-simulated": ([_cycle(1, "a", "Unschedulable", message="m")], [("ns/x", "why"), ("ns/a", "other")],
                      [("ns/i", "ignored"), ("ns/j", "ignored")]),
    "ties": ([_cycle(1, p, "Unschedulable", message=m) for p, m in
              [("a", "b-msg"), ("b", "a-msg"), ("c", "b-msg"), ("d", "a-msg"), ("e", "c-msg")]], [], []),
    "empty": ([], [], []),
}


@pytest.mark.parametrize("case", list(TALLIES), ids=list(TALLIES))
def test_tallies_are_the_rows_counts_and_reasons(case: str, demo: SimulationResult) -> None:
    cycles, not_simulated, ignored = TALLIES[case]
    result = replace(demo, cycles=cycles, not_simulated=not_simulated, ignored_pods=ignored)
    rows = sm.pod_rows(result)
    assert sm.tallies(result) == (sm.summarize(result, rows), sm.reason_histogram(rows))
    data = sm.report_data(result)
    assert (data.counts, data.reasons) == (sm.summarize(result, rows), sm.reason_histogram(rows))
    assert data.rows == rows  # read off the result when first asked for


@pytest.mark.parametrize("case", ["scenarios/080-preemption", "scenarios/102-edge-preemption", "scenarios/011-mixed"])
def test_tallies_of_scenarios(case: str) -> None:
    conformance = ROOT / "tests" / "conformance"
    path = conformance / f"{case}.yaml"
    registry = in_tree_registry()
    result = Simulation(load_snapshot([str(path)]), load_config(None, registry), registry,
                        SimulationOptions(tie_break="name")).run()
    rows = sm.pod_rows(result)
    assert sm.tallies(result) == (sm.summarize(result, rows), sm.reason_histogram(rows))


def _usage_row(name: str, n: int, scalar: dict[str, tuple[int, int]] | None = None) -> sm.NodeUsage:
    return sm.NodeUsage(name, n, 110, 100 * n + 7, 4000, (1 << 33) * n, 1 << 36, scalar or {}, zone=f"z{n % 2}")


@pytest.mark.parametrize("nodes", [
    [],
    [_usage_row("a", 1)],
    [_usage_row(f"n{i}", i) for i in range(30)],
    [_usage_row("a", 1, {"example.com/gpu": (1, 2)}), _usage_row("b", 2),
     _usage_row("c", 3, {"example.com/gpu": (0, 4), "a.io/fpga": (1, 1)})],
], ids=["none", "one", "many", "scalars"])
def test_total_usage_sums_every_count(nodes: list[sm.NodeUsage]) -> None:
    t = sm.total_usage(nodes, "t")
    assert (t.name, t.nodes, t.pods, t.pods_allocatable, t.milli_cpu, t.milli_cpu_allocatable, t.memory,
            t.memory_allocatable) == ("t", len(nodes), *(sum(getattr(u, f) for u in nodes) for f in (
                "pods", "pods_allocatable", "milli_cpu", "milli_cpu_allocatable", "memory", "memory_allocatable")))
    scalar: dict[str, tuple[int, int]] = {}
    for u in nodes:
        for k, (r, a) in u.scalar.items():
            scalar[k] = (scalar.get(k, (0, 0))[0] + r, scalar.get(k, (0, 0))[1] + a)
    assert list(t.scalar.items()) == sorted(scalar.items())
    assert sm.total_usage(nodes).name == f"total ({len(nodes)} nodes)"
