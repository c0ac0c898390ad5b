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
from pysched.errors import InputError
from pysched.scheduler.simulation import Simulation
from tests.golden import assert_golden

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")
ENV = {"COLUMNS": "80", "LINES": "40", "NO_COLOR": None, "FORCE_COLOR": None}
COLOUR = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
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
    lines = ok("simulate", DEMO, "--max-rows", "0").splitlines()

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
    plain = ok("simulate", DEMO, "--format", "rich")
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
