"""``pysched explain POD``: goldens on the fixtures, exit codes, pod lookup, JSON/YAML, and on the conformance
scenarios the exact recorded FailedScheduling message or node of every pod's last cycle.

Goldens live in ``tests/golden/``; regenerate them with ``PYSCHED_UPDATE_GOLDEN=1 python -m pytest
tests/test_explain.py`` and review ``git diff tests/golden``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.explain import build_explain_document, explain_data
from pysched.report.plain import render_blocks
from pysched.scheduler.explain import Explanation, explain_pod
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.conformance.harness import SCENARIOS, scenario_inputs
from tests.golden import assert_golden
from tests.test_cli import DEMO, ETL_MESSAGE, ROOT, WIDE, ok, run

WHATIF = str(ROOT / "fixtures" / "whatif.yaml")


# ---------------------------------------------------------------------------------------------- goldens
@pytest.mark.parametrize(("golden", "args", "code"), [
    ("explain_demo_etl.txt", ["shop/etl-1", "-f", DEMO], 3),
    ("explain_demo_trainer2.txt", ["trainer-2", "-n", "ml", "-f", DEMO], 3),
    ("explain_demo_checkout.txt", ["checkout-1", "-f", DEMO], 0),
    ("explain_demo_web1.txt", ["shop/web-1", "-f", DEMO], 0),
    ("explain_demo_canary.txt", ["shop/canary-1", "-f", DEMO], 3),
    ("explain_whatif_api.txt", ["shop/api-1", "-f", WHATIF], 3),
])
def test_explain_table_golden(golden: str, args: list[str], code: int) -> None:
    result = run("explain", *args)
    assert result.exit_code == code, result.output
    assert_golden(golden, result.stdout)
    assert not set(result.stdout) & set("─│━┏█\x1b")  # not a terminal: plain text


def test_explain_help_golden() -> None:
    text = ok("explain", "--help")
    assert_golden("explain_help.txt", text)
    for option in ("--filename", "--namespace", "--config", "--all-nodes", "--tie-break", "--seed", "--output",
                   "--format", "--no-color"):
        assert option in text


def test_explain_etl_shows_the_exact_message_and_the_what_if() -> None:
    text = run("explain", "shop/etl-1", "-f", DEMO, env=WIDE).stdout
    assert f"FailedScheduling: {ETL_MESSAGE}" in text
    assert "verdict: unschedulable (after 2 cycles, pass 2)" in text
    assert "the pod requests 6 cpu, more than the node's allocatable 4" in text
    assert "needs a toleration for dedicated=gpu:NoSchedule" in text


def test_explain_whatif_fixture_covers_each_node() -> None:
    text = run("explain", "shop/api-1", "-f", WHATIF, env=WIDE).stdout
    for expected in ("cordoned: uncordon it (kubectl uncordon node-a1)",
                     "port TCP/8080 is held by shop/legacy-1; evicting shop/legacy-1 (priority 0) would do",
                     "needs a toleration for dedicated=db:NoSchedule",
                     "needs 500m more cpu free (500m of 2 free, requests 1); evicting shop/batch-1 (priority 0)",
                     "preemption not attempted: not eligible due to preemptionPolicy=Never."):
        assert expected in text
    assert text.count("with these changes it fits (checked)") == 4


def test_all_nodes_gives_one_row_per_node() -> None:
    grouped = ok("explain", "shop/web-1", "-f", DEMO, env=WIDE)
    assert "Filter verdicts on 4 nodes (2 groups of nodes with the same verdicts)" in grouped
    assert "3  node-1, node-2, node-3  feasible" in grouped
    every = ok("explain", "shop/web-1", "-f", DEMO, "--all-nodes", env=WIDE)
    assert "Filter verdicts on 4 nodes (one row per node)" in every
    matrix = every.split("(one row per node)")[1].split("passed on every node")[0]
    rows = [line.split() for line in matrix.splitlines() if line.strip().startswith("1  node-")]
    assert [(r[1], r[2]) for r in rows] == [("node-1", "feasible"), ("node-2", "feasible"), ("node-3", "feasible"),
                                            ("node-4", "rejected")]


def test_rich_and_github_formats() -> None:
    rich = run("explain", "ml/trainer-2", "-f", DEMO, "--format", "rich").stdout
    assert "─" in rich and "\x1b[" not in rich
    coloured = run("explain", "ml/trainer-2", "-f", DEMO, "--format", "rich",
                   env={"FORCE_COLOR": "1", "TERM": "xterm-256color"}).stdout
    assert "\x1b[" in coloured
    assert "\x1b[" not in run("explain", "ml/trainer-2", "-f", DEMO, "--format", "rich", "--no-color",
                              env={"FORCE_COLOR": "1", "TERM": "xterm-256color"}).stdout
    md = run("explain", "ml/trainer-2", "-f", DEMO, "--format", "github").stdout
    assert md.startswith("## Explain ml/trainer-2") and "| node-3 |" in md


# ---------------------------------------------------------------------------------------------- exit codes and lookup
def test_exit_codes() -> None:
    assert run("explain", "shop/web-2", "-f", DEMO).exit_code == 0
    assert run("explain", "shop/etl-1", "-f", DEMO).exit_code == 3  # unschedulable
    assert run("explain", "shop/canary-1", "-f", DEMO).exit_code == 3  # gated
    assert run("explain", "shop/etl-1", "-f", DEMO, "-o", "json").exit_code == 3


def test_unknown_pod_names_close_matches() -> None:
    result = run("explain", "shop/etl-2", "-f", DEMO)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no pod 'shop/etl-2' in the snapshot; did you mean shop/etl-1, ")
    result = run("explain", "trainer", "-f", DEMO)
    assert result.exit_code == 2
    assert result.stderr == "error: no pod 'trainer' in the snapshot; did you mean ml/trainer-1, ml/trainer-2?\n"
    assert run("explain", "nothing-like-it", "-f", DEMO).stderr == \
        "error: no pod 'nothing-like-it' in the snapshot\n"


def test_pod_lookup_forms() -> None:
    by_name = json.loads(run("explain", "etl-1", "-f", DEMO, "-o", "json").stdout)
    by_ns = json.loads(run("explain", "etl-1", "-n", "shop", "-f", DEMO, "-o", "json").stdout)
    by_key = json.loads(run("explain", "shop/etl-1", "-f", DEMO, "-o", "json").stdout)
    assert by_name == by_ns == by_key and by_key["pod"] == "shop/etl-1"
    clash = run("explain", "shop/etl-1", "-n", "ml", "-f", DEMO)
    assert clash.exit_code == 2 and "-n says 'ml'" in clash.stderr
    assert run("explain", "etl-1", "-n", "ml", "-f", DEMO).exit_code == 2


def test_bound_pod_and_missing_snapshot_exit_2(tmp_path: Path) -> None:
    bound = run("explain", "shop/report-1", "-f", DEMO)
    assert bound.exit_code == 2
    assert bound.stderr == ("error: pod shop/report-1 is already bound to node-1 (spec.nodeName): only pending "
                            "pods are scheduled\n")
    # no snapshot: the live cluster, and here there is none to read
    missing = run("explain", "shop/etl-1", env={"KUBECONFIG": str(tmp_path / "none"), "HOME": str(tmp_path),
                                               "KUBERNETES_SERVICE_HOST": None})
    assert missing.exit_code == 2 and missing.stdout == "" and missing.stderr.startswith("error: ")


def test_pod_of_another_scheduler_exits_2(tmp_path: Path) -> None:
    snap = tmp_path / "s.yaml"
    snap.write_text(Path(DEMO).read_text() + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: odd, namespace: shop}\n"
                    "spec: {schedulerName: other, containers: [{name: c, image: i}]}\n")
    result = run("explain", "shop/odd", "-f", str(snap))
    assert result.exit_code == 2 and "schedulerName 'other' has no profile" in result.stderr


# ---------------------------------------------------------------------------------------------- json / yaml
def test_json_document() -> None:
    data = json.loads(run("explain", "shop/checkout-1", "-f", DEMO, "-o", "json").stdout)
    assert set(data) == {"pod", "priority", "profile", "nodes", "verdict", "cycles", "suggestions"}
    assert data["verdict"] == {"outcome": "Scheduled", "text": "bound to node-1", "node": "node-1", "message": None}
    first, second = data["cycles"]
    assert (first["outcome"], first["nominated_node"], first["victims"]) == ("Nominated", "node-1", ["shop/report-1"])
    assert first["preemption"]["chosen"] == "node-1" and first["preemption"]["runner_up"] == "node-2"
    assert "filter_all" in first and first["score_summary"] is None
    assert second["nominated_node_fast_path"] is True
    # the cycles are the conformance schema: the same keys and values as simulate --trace
    sim = json.loads(ok("simulate", DEMO, "-o", "json", "--trace", "--pod", "shop/checkout-1"))
    traced = [c for c in sim["cycles"] if c["pod"] == "shop/checkout-1"]
    assert [{k: v for k, v in c.items() if k not in ("score_summary", "preemption")} for c in data["cycles"]] == traced


def test_json_scores_and_suggestions() -> None:
    web = json.loads(run("explain", "shop/web-1", "-f", DEMO, "-o", "json").stdout)
    summary = web["cycles"][0]["score_summary"]
    assert (summary["winner"], summary["runner_up"], summary["margin"]) == ("node-1", "node-3", 56)
    assert summary["differences"] == {"NodeResourcesFit": 38, "ImageLocality": 12,
                                      "NodeResourcesBalancedAllocation": 6}
    assert web["suggestions"] is None
    trainer = json.loads(run("explain", "ml/trainer-2", "-f", DEMO, "-o", "json").stdout)
    nearest = trainer["suggestions"]["nodes_nearest"]
    assert [n["node"] for n in nearest] == ["node-3", "node-4", "node-1", "node-2"]
    assert nearest[0]["changes"][0]["set_labels"] == {"gpu": "true"} and nearest[0]["fits_after"]


def test_yaml_is_the_json_document() -> None:
    args = ("explain", "ml/trainer-2", "-f", DEMO)
    assert yaml.safe_load(run(*args, "-o", "yaml").stdout) == json.loads(run(*args, "-o", "json").stdout)


def test_json_is_byte_identical_across_runs() -> None:
    first = run("explain", "ml/trainer-2", "-f", DEMO, "-o", "json")
    assert first.stdout_bytes == run("explain", "ml/trainer-2", "-f", DEMO, "-o", "json").stdout_bytes


def test_config_option(tmp_path: Path) -> None:
    binpack = str(ROOT / "fixtures" / "demo-config-binpack.yaml")
    data = json.loads(run("explain", "shop/web-1", "-f", DEMO, "--config", binpack, "-o", "json").stdout)
    assert data["verdict"]["node"] == "node-2"
    assert "NodeResourcesBalancedAllocation" not in data["cycles"][0]["score_summary"]["differences"]


# ---------------------------------------------------------------------------------------------- conformance
# one scenario per family (small ones: explain re-simulates up to the pod)
CONFORMANCE = ["001-taints", "002-nodeaffinity", "004-ports", "005-spread", "012-resources", "021-gates",
               "027-nodename", "032-preemption", "058-config", "067-images", "071-mixed", "102-interpod",
               "006-realistic"]
INPUTS = {stem: (snap, cfg, exp) for stem, snap, cfg, exp in scenario_inputs(SCENARIOS)}


def _expected_last(exp: Path) -> dict[str, dict]:
    with gzip.open(exp, "rt") as f:
        data = json.load(f)
    last: dict[str, dict] = {}
    for c in data["cycles"]:
        last[c["pod"]] = c
    return last


def _check_verdict(data: dict, text: str, want: dict) -> None:
    v = data["verdict"]
    assert v["outcome"] == want["outcome"], (data["pod"], v, want)
    if want["outcome"] == "Scheduled":
        assert v["node"] == want["node"]
        assert f"verdict: bound to {want['node']} " in text
    elif want["outcome"] in ("Unschedulable", "Nominated"):
        assert v["message"] == want["message"]
        assert f"FailedScheduling: {want['message']}\n" in text
        if want["outcome"] == "Nominated":
            assert v["nominated_node"] == want["nominated_node"]


@pytest.mark.parametrize("stem", CONFORMANCE)
def test_explain_reproduces_the_recorded_last_cycles(stem: str) -> None:
    snap, cfg_path, exp = INPUTS[stem]
    want = _expected_last(exp)
    registry = in_tree_registry()
    cfg = load_config(str(cfg_path) if cfg_path else None, registry)
    # every pod, from one full traced simulation: the data and text explain builds from its trace
    result = Simulation(load_snapshot([str(snap)]), cfg, registry,
                        SimulationOptions(tie_break="name", trace=True)).run()
    by_pod: dict[str, list] = {}
    for c in result.cycles:
        by_pod.setdefault(c.pod, []).append(c)
    assert set(by_pod) == set(want)
    for pod, cycles in by_pod.items():
        e = Explanation(pod, cycles, None, result.nodes)
        _check_verdict(explain_data(e), render_blocks(build_explain_document(e), "plain"), want[pod])
    # and a few pods through the explain run itself (simulation up to the pod, what-if computed)
    unschedulable = [p for p, c in want.items() if c["outcome"] == "Unschedulable"]
    picks = list(dict.fromkeys([*unschedulable[:2], list(want)[-1]]))
    for pod in picks:
        e = explain_pod(load_snapshot([str(snap)]), cfg, registry, pod, SimulationOptions(tie_break="name"))
        _check_verdict(explain_data(e), render_blocks(build_explain_document(e), "plain"), want[pod])
        assert [c.to_dict(True) for c in e.cycles] == [c.to_dict(True) for c in by_pod[pod]]
        if want[pod]["outcome"] == "Unschedulable":
            assert e.whatif is not None


def test_explain_cli_on_a_conformance_scenario() -> None:
    snap, _, exp = INPUTS["001-taints"]
    want = _expected_last(exp)
    pod = next(p for p, c in want.items() if c["outcome"] == "Unschedulable")
    result = run("explain", pod, "-f", str(snap))
    assert result.exit_code == 3
    assert f"FailedScheduling: {want[pod]['message']}\n" in result.stdout


def test_progress_callback_is_wired(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib

    from pysched.cli import diff_cmd, explain_cmd

    calls: list[tuple[int, int]] = []

    @contextlib.contextmanager
    def spy(quiet: bool):
        yield None if quiet else (lambda done, total: calls.append((done, total)))

    baseline = run("explain", "shop/etl-1", "-f", DEMO, "-o", "json").stdout
    monkeypatch.setattr(explain_cmd, "progress_bar", spy)
    monkeypatch.setattr(diff_cmd, "progress_bar", spy)
    assert run("explain", "shop/etl-1", "-f", DEMO, "-o", "json").stdout == baseline
    assert calls and calls[-1][0] <= calls[-1][1]
    calls.clear()
    run("explain", "shop/etl-1", "-f", DEMO, "-q")
    assert calls == []
    ok("diff", "default", "default", "-f", DEMO)
    assert calls
