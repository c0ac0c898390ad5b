"""The ``pysched`` command line, run in-process with typer's ``CliRunner``.

Golden files live in ``tests/golden/``. After an intended change of the output, regenerate them with

    PYSCHED_UPDATE_GOLDEN=1 python -m pytest tests/test_cli.py tests/test_report.py

and review ``git diff tests/golden`` before committing. Under ``CliRunner`` stdout is not a terminal, so
``-o table`` prints the plain (tabulate) report; help texts are rendered 80 columns wide.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pysched.cli import output as cli_output
from pysched.cli.main import app
from pysched.cli.messages import humane
from pysched.errors import InputError
from pysched.scheduler.simulation import Simulation
from tests.golden import assert_golden

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")
ENV = {"COLUMNS": "80", "LINES": "40", "NO_COLOR": None, "FORCE_COLOR": None}
COLOUR = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
WIDE = {"COLUMNS": "1000"}  # no wrapping: one line per table row, for tests that read rows
TRACEBACK = "Traceback (most recent call last)"
ETL_MESSAGE = ("0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu. "
               "no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful "
               "for scheduling.")


def run(*args: str, env: dict[str, str | None] | None = None, input: str | None = None):
    result = CliRunner().invoke(app, list(args), prog_name="pysched", terminal_width=80, input=input,
                                env={**ENV, **(env or {})})
    assert TRACEBACK not in result.output
    return result


def ok(*args: str, **kw) -> str:
    result = run(*args, **kw)
    assert result.exit_code == 0, result.output
    return result.stdout


# ---------------------------------------------------------------------------------------------- help
def test_help_golden() -> None:
    assert_golden("help.txt", ok("--help"))


def test_simulate_help_golden() -> None:
    text = ok("simulate", "--help")
    assert_golden("simulate_help.txt", text)
    for option in ("--format", "--no-color", "--max-rows", "--trace", "--tie-break", "--output"):
        assert option in text


def test_version() -> None:
    assert ok("--version").startswith("pysched ")


# ---------------------------------------------------------------------------------------------- table
def test_table_golden_plain() -> None:
    text = ok("simulate", DEMO)
    assert_golden("simulate_demo.txt", text)
    assert text == ok("simulate", DEMO, "--format", "plain")  # not a terminal: plain is the default
    assert not set(text) & set("─│━┏█\x1b")


def test_table_golden_trace_one_pod() -> None:
    text = ok("simulate", DEMO, "--trace", "--pod", "shop/checkout-1")
    assert_golden("simulate_demo_trace.txt", text)
    assert "-- shop/checkout-1 (priority 100000) --" in text
    assert "pass 1: Nominated to node-1, preempting shop/report-1" in text
    assert "shop/web-1 (priority" not in text  # only the pod asked for is traced


def test_table_golden_github() -> None:
    assert_golden("simulate_demo.md", ok("simulate", DEMO, "--format", "github"))


def test_table_shows_the_demo_decisions() -> None:
    lines = ok("simulate", DEMO, "--max-rows", "0", env=WIDE).splitlines()

    def row(pod: str) -> list[str]:
        return next(line.split(None, 5) for line in lines if line.split()[1:2] == [pod] and line.split()[0].isdigit()
                    and len(line.split()) >= 5 and line.split()[3] in ("Scheduled", "Unschedulable", "Gated"))

    assert row("shop/checkout-1") == ["1", "shop/checkout-1", "100000", "Scheduled", "node-1",
                                      "preempted shop/report-1 in pass 1; bound in pass 2"]
    assert row("shop/etl-1") == ["6", "shop/etl-1", "100", "Unschedulable", "-", ETL_MESSAGE]
    assert row("shop/canary-1")[3:5] == ["Gated", "-"]
    summary = {line.rsplit(None, 1)[0]: line.rsplit(None, 1)[1] for line in lines[1:9]
               if line and line.rsplit(None, 1)[-1].isdigit()}
    assert summary == {"scheduled": "4", "unschedulable": "2", "nominated, still pending": "0", "errors": "0",
                       "not simulated": "0"}


def test_max_rows_truncates_with_a_hint() -> None:
    text = ok("simulate", DEMO, "--max-rows", "2")
    assert "... 5 more pods not shown (--max-rows 0 shows all)" in text
    assert "shop/web-2" not in text.split("Pods (queue order)")[1]
    result = run("simulate", DEMO, "--max-rows", "-1")
    assert result.exit_code == 2 and "--max-rows" in result.output


def test_rich_format_colour_and_no_color() -> None:
    plain = ok("simulate", DEMO, "--format", "rich", env={"COLUMNS": "120"})
    assert "─" in plain and "█" in plain and "\x1b[" not in plain  # not a terminal: boxes, no colour
    coloured = ok("simulate", DEMO, "--format", "rich", env=COLOUR)
    assert "\x1b[" in coloured
    assert "\x1b[" not in ok("simulate", DEMO, "--format", "rich", "--no-color", env=COLOUR)


def test_unknown_trace_pod_is_a_warning() -> None:
    result = run("simulate", DEMO, "--trace", "--pod", "shop/nope", "--pod", "shop/etl-1")
    assert result.exit_code == 0
    assert "warning: --pod shop/nope: no pending pod" in result.stderr
    assert "-- shop/etl-1 (priority 100) --" in result.stdout
    assert "nope" not in run("simulate", DEMO, "-q", "--trace", "--pod", "shop/nope").stderr


def test_progress_callback_is_wired_when_stderr_is_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    real_run = Simulation.run

    def spy(self: Simulation, progress=None):
        seen.append(progress)
        return real_run(self, progress=progress)

    monkeypatch.setattr(Simulation, "run", spy)
    baseline = ok("simulate", DEMO, "-o", "json")
    assert seen == [None]  # CliRunner's stderr is no terminal: no bar, no callback
    monkeypatch.setattr(cli_output, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(cli_output, "PROGRESS_DELAY", 0.0)
    assert ok("simulate", DEMO, "-o", "json") == baseline
    assert callable(seen[-1])
    ok("simulate", DEMO, "-o", "json", "-q")
    assert seen[-1] is None


# ---------------------------------------------------------------------------------------------- json / yaml
def test_json_is_byte_identical_across_runs() -> None:
    first = run("simulate", DEMO, "-o", "json", "--trace")
    second = run("simulate", DEMO, "-o", "json", "--trace")
    assert first.exit_code == second.exit_code == 0
    assert first.stdout_bytes == second.stdout_bytes
    assert ok("simulate", DEMO, "-o", "json") == ok("simulate", DEMO, "-o", "json")


def test_json_decisions() -> None:
    data = json.loads(ok("simulate", DEMO, "-o", "json"))
    checkout = [c for c in data["cycles"] if c["pod"] == "shop/checkout-1"]
    assert [(c["pass"], c["outcome"]) for c in checkout] == [(1, "Nominated"), (2, "Scheduled")]
    assert (checkout[0]["nominated_node"], checkout[0]["victims"]) == ("node-1", ["shop/report-1"])
    assert checkout[1]["node"] == "node-1"
    assert data["bindings"] == {"ml/trainer-1": "node-4", "shop/checkout-1": "node-1", "shop/web-1": "node-1",
                                "shop/web-2": "node-2"}
    assert data["pending"] == ["ml/trainer-2", "shop/canary-1", "shop/etl-1"]
    last = {c["pod"]: c for c in data["cycles"]}
    assert last["shop/canary-1"]["outcome"] == "Gated"
    assert (last["shop/etl-1"]["outcome"], last["shop/etl-1"]["message"]) == ("Unschedulable", ETL_MESSAGE)


@pytest.mark.parametrize("trace", [False, True])
def test_yaml_parses_back_to_the_json_data(trace: bool) -> None:
    extra = ["--trace"] if trace else []
    from_json = json.loads(ok("simulate", DEMO, "-o", "json", *extra))
    from_yaml = yaml.safe_load(ok("simulate", DEMO, "-o", "yaml", *extra))
    assert from_yaml == from_json


def test_stdin_snapshot() -> None:
    text = Path(DEMO).read_text()
    assert json.loads(ok("simulate", "-", "-o", "json", input=text)) == json.loads(ok("simulate", DEMO, "-o", "json"))


# ---------------------------------------------------------------------------------------------- errors
def test_missing_file_exits_2() -> None:
    result = run("simulate", "does-not-exist.yaml")
    assert result.exit_code == 2
    assert result.stderr == "error: does-not-exist.yaml: no such file or folder\n"
    assert result.stdout == ""


def test_yaml_syntax_error_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [x\n")
    result = run("simulate", str(bad))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {bad}:") and "invalid YAML" in result.stderr
    assert result.stdout == ""


def test_invalid_tie_break_exits_2() -> None:
    result = run("simulate", DEMO, "--tie-break", "coin")
    assert result.exit_code == 2
    assert "Invalid value for '--tie-break'" in result.output and "'coin'" in result.output


def test_no_snapshot_and_no_kubeconfig_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # without a snapshot pysched reads the live cluster; with no kubeconfig anywhere that is a clear error
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = run("simulate")
    assert result.exit_code == 2
    assert "kubeconfig" in result.stderr
    assert "Traceback" not in result.stderr


def test_internal_error_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: Simulation, progress=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(Simulation, "run", boom)
    result = run("simulate", DEMO)
    assert result.exit_code == 1
    assert result.stderr == "internal error: RuntimeError: boom (run with --debug for the traceback)\n"
    debug = CliRunner().invoke(app, ["simulate", DEMO, "--debug"], env=ENV)
    assert debug.exit_code == 1 and TRACEBACK in debug.stderr


def test_input_error_raised_during_the_run_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    def bad(self: Simulation, progress=None):
        raise InputError("a bad field", file="x.yaml", obj="Pod shop/x", field="spec.priority")

    monkeypatch.setattr(Simulation, "run", bad)
    result = run("simulate", DEMO)
    assert result.exit_code == 2
    assert result.stderr == "error: x.yaml: Pod shop/x: spec.priority: a bad field\n"


# ---------------------------------------------------------------------------------------------- issue 18
@pytest.mark.parametrize("width", [80, 120], ids=["80-columns", "120-columns"])
@pytest.mark.parametrize("fmt", ["plain", "rich"])
def test_tables_fit_the_width(fmt: str, width: int) -> None:
    """Goldens at 80 and 120 columns; every table line fits and no pod or node name is broken."""
    text = ok("simulate", DEMO, "--format", fmt, "--trace", "--pod", "shop/etl-1", "--pod", "shop/checkout-1",
              env={"COLUMNS": str(width)})
    assert_golden(f"simulate_demo_{fmt}_{width}.txt", text)
    free_lines = ("message:", "PreFilter", "FailedScheduling", "preemption")  # whole messages, never tables
    for line in text.splitlines():
        if not line.startswith(free_lines):
            assert len(line.rstrip()) <= width, line
    for name in ("shop/checkout-1", "shop/report-1", "node-1", "node-2", "node-3", "node-4", "eu-west-1a"):
        assert name in text
    for broken in ("shop/\n", "node-\n", "shop/etl-\n"):
        assert broken not in text


def test_short_headers_come_with_a_legend() -> None:
    text = ok("simulate", DEMO, "--trace", "--pod", "shop/etl-1", env={"COLUMNS": "80"})
    assert "TT = TaintToleration, NRF = NodeResourcesFit" in text
    wide = ok("simulate", DEMO, "--trace", "--pod", "shop/etl-1", env=WIDE)
    assert "TT = TaintToleration" not in wide and "TaintToleration" in wide


@pytest.mark.parametrize(("kinds", "code", "said"), [
    ([], 0, []),
    (["unschedulable"], 4, ["fail-on: 2 pods ended without a node (2 unschedulable, 0 nominated but still pending)"]),
    (["preemption"], 4, ["fail-on: 1 pod preempted 1 victim"]),
    (["error"], 0, []),
    (["error", "preemption", "preemption"], 4, ["fail-on: 1 pod preempted 1 victim"]),
], ids=["none", "unschedulable", "preemption", "error-none-occurred", "repeated"])
def test_fail_on(kinds: list[str], code: int, said: list[str]) -> None:
    args = [a for k in kinds for a in ("--fail-on", k)]
    result = run("simulate", DEMO, "-o", "json", *args)
    assert result.exit_code == code, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("fail-on")] == said
    assert json.loads(result.stdout)["summary"]["counts"]["unschedulable"] == 2  # the output is still printed


def test_fail_on_counts_only_the_printed_namespace() -> None:
    assert run("simulate", DEMO, "-n", "ml", "--fail-on", "preemption").exit_code == 0
    assert run("simulate", DEMO, "-n", "ml", "--fail-on", "unschedulable").exit_code == 4


def test_json_summary_is_the_tables_data() -> None:
    data = json.loads(ok("simulate", DEMO, "-o", "json"))["summary"]
    assert data["counts"] == {"simulated": 7, "scheduled": 4, "unschedulable": 2, "gated": 1, "nominated": 0,
                              "errors": 0, "preemptors": 1, "victims": 1, "not_simulated": 0, "ignored": 0,
                              "cycles": 11, "passes": 2, "nodes": 4}
    assert [(r["count"], r["pods"]) for r in data["reasons"]] == [(1, ["shop/etl-1"]), (1, ["ml/trainer-2"])]
    assert data["reasons"][0]["message"] == ETL_MESSAGE
    node1 = data["nodes"][0]
    assert (node1["name"], node1["zone"], node1["cpu_milli"]) == (
        "node-1", "eu-west-1a", {"requested": 4000, "allocatable": 4000, "fraction": 1.0})
    assert [(z["name"], z["nodes"], z["cpu_milli"]["requested"]) for z in data["zones"]] == [
        ("eu-west-1a", 2, 5000), ("eu-west-1b", 2, 5500)]
    assert data["total"]["pods"] == {"requested": 6, "allocatable": 440, "fraction": 0.0136}
    assert yaml.safe_load(ok("simulate", DEMO, "-o", "yaml"))["summary"] == data


@pytest.mark.parametrize(("args", "said"), [
    (["-o", "xml"], "Invalid value for '-o' / '--output': 'xml' is not one of 'table', 'json', 'yaml'."),
    (["--max-rows", "-1"], "Invalid value for '--max-rows': must be 0 or more"),
    (["--seed", "x"], "Invalid value for '--seed': expected a whole number"),
], ids=["choice", "range", "integer"])
def test_usage_errors_in_our_words(args: list[str], said: str) -> None:
    result = run("simulate", DEMO, *args)
    assert result.exit_code == 2
    assert said in result.output
    assert "Value error" not in result.output and "Input should" not in result.output


@pytest.mark.parametrize(("library", "ours"), [
    ("Input should be greater than or equal to 0", "must be 0 or more"),
    ("-1 is not in the range x>=0.", "must be 0 or more"),
    ("Input should be greater than 1", "must be more than 1"),
    ("0 is not in the range x>1.", "must be more than 1"),
    ("Input should be a valid integer, unable to parse string as an integer", "expected a whole number"),
    ("'x' is not a valid int.", "expected a whole number"),
    ("'x' is not a valid integer.", "expected a whole number"),
    ("'x' is not a valid float.", "expected a number"),
    ("Value error, 'xml' is not one of 'table', 'json', 'yaml'", "'xml' is not one of 'table', 'json', 'yaml'"),
], ids=["pydantic-min", "click-min", "pydantic-more", "click-more", "pydantic-int", "click-int", "click-integer",
        "click-float", "pydantic-choice"])
def test_both_libraries_phrasings_become_ours(library: str, ours: str) -> None:
    """typer's messages come from pydantic (0.29 on) or click (before): either way the user reads ours."""
    assert humane(library) == ours


def test_help_has_meaningful_metavars() -> None:
    for cmd in ("simulate", "explain", "diff", "plugins", "snapshot"):
        text = ok(cmd, "--help")
        assert "<list[" not in text and "range>" not in text and "<str>" not in text and "<int>" not in text, cmd
    text = ok("simulate", "--help")
    for expected in ("[SNAPSHOT...]", "-f, --filename FILE", "--config FILE", "--seed N", "--max-rows N",
                     "--context NAME", "--pod NS/NAME", "--fail-on KIND"):
        assert expected in text


def test_namespace_not_in_the_input_is_a_warning() -> None:
    result = run("simulate", DEMO, "-n", "nosuchns")
    assert result.exit_code == 0
    assert "warning: -n nosuchns: no namespace of that name and no pod in it in the input (namespaces: ml, shop)" \
        in result.stderr
    assert "warning: -n" not in run("simulate", DEMO, "-n", "ml").stderr


def test_pod_without_trace_is_a_warning() -> None:
    result = run("simulate", DEMO, "--pod", "shop/etl-1")
    assert "warning: --pod only chooses which pods --trace traces: without --trace it has no effect" in result.stderr
    assert "--pod only" not in run("simulate", DEMO, "--trace", "--pod", "shop/etl-1").stderr


def test_one_pod_differs_is_singular() -> None:
    from pysched.report.diff import metrics, side_of

    result = Simulation(*_demo_inputs()).run()
    side = side_of(result, "A", "default", [DEMO])
    texts = {n: next(m for m in metrics(side, side, n) if m.name == "pods placed differently").verdict
             for n in (1, 2)}
    assert texts == {1: "1 pod differs", 2: "2 pods differ"}


def _demo_inputs():
    from pysched.framework.config import load_config
    from pysched.plugins import in_tree_registry
    from pysched.snapshot.loader import load_snapshot

    registry = in_tree_registry()
    return load_snapshot([DEMO]), load_config(None, registry), registry


def test_console_exit_runs_exit_handlers(tmp_path: Path) -> None:
    """The console entry point leaves without the interpreter's teardown, but still runs the exit handlers
    (the kubernetes client deletes its temporary certificate and key files in one)."""
    import subprocess
    import sys

    marker = tmp_path / "ran"
    code = ("import atexit, sys, pathlib\n"
            "from pysched.cli.main import main\n"
            f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('x'))\n"
            "sys.argv = ['pysched', 'plugins']\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "NodeResourcesFit" in done.stdout
    assert marker.read_text() == "x"
