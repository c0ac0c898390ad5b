"""The options the commands share behave the same in every command that has them (cli/options.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pysched.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")
POD = str(ROOT / "fixtures" / "cluster-capacity" / "pod.yaml")
COMMANDS = {
    "simulate": ["simulate", DEMO],
    "explain": ["explain", "shop/web-1", "-f", DEMO],
    "diff": ["diff", "default", "default", "-f", DEMO],
    "diff --snapshot-b": ["diff", "-f", DEMO, "--snapshot-b", DEMO],
    "capacity": ["capacity", DEMO, "--pod", POD, "--max", "2"],
}
WHAT_IF_COMMANDS = ("simulate", "explain", "diff", "capacity")


def run(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "80"})


@pytest.mark.parametrize("command", list(COMMANDS))
def test_max_file_size_is_honoured(command: str) -> None:
    out = run([*COMMANDS[command], "--max-file-size", "100", "-o", "json"])
    assert out.exit_code == 2, out.output
    assert "over the limit of 100 bytes" in out.stderr
    assert "Traceback" not in out.output


@pytest.mark.parametrize("command", list(COMMANDS))
def test_strict_turns_warnings_into_errors(command: str, tmp_path: Path) -> None:
    snap = tmp_path / "demo.yaml"
    text = Path(DEMO).read_text(encoding="utf-8")
    snap.write_text(text.replace("kind: Node\n", "kind: Node\nbogusField: 1\n", 1), encoding="utf-8")
    args = [str(snap) if a == DEMO else a for a in COMMANDS[command]]
    lenient = run([*args, "-o", "json"])
    assert lenient.exit_code in (0, 3), lenient.output
    assert "bogusField" in lenient.stderr  # a warning
    strict = run([*args, "-o", "json", "--strict"])
    assert strict.exit_code == 2, strict.output
    assert "bogusField" in strict.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_validate_chooses_between_warning_error_and_silence(command: str, tmp_path: Path) -> None:
    snap = tmp_path / "demo.yaml"
    text = Path(DEMO).read_text(encoding="utf-8")
    snap.write_text(text.replace("kind: Node\n", "kind: Node\nbogusField: 1\n", 1), encoding="utf-8")
    args = [str(snap) if a == DEMO else a for a in COMMANDS[command]]
    ignored = run([*args, "-o", "json", "--validate", "ignore"])
    assert ignored.exit_code in (0, 3), ignored.output
    assert "bogusField" not in ignored.stderr
    strict = run([*args, "-o", "json", "--validate=strict"])
    assert strict.exit_code == 2, strict.output
    assert "bogusField" in strict.stderr and "Traceback" not in strict.output


def _options(command: str) -> list[str]:
    """The options of a command's --help, in order (the first word of each option line)."""
    out = run([command, "--help"]).stdout
    options = out[out.index("\nOptions:\n"):]
    return [line.split()[0].rstrip(",") for line in options.splitlines() if line.startswith("  -")]


def test_what_if_options_are_one_group_in_every_command_that_takes_them() -> None:
    group = ["--cordon", "--uncordon", "--drain", "--remove-node", "--add-node", "--scale", "--taint", "--untaint",
             "--label", "--scenario", "--now", "--run-cronjobs"]
    for command in WHAT_IF_COMMANDS:
        opts = _options(command)
        start = opts.index("--cordon")
        assert opts[start:start + len(group)] == group, command
        assert opts[start + len(group)] in ("-q", "--quiet"), command  # the group goes before --quiet
        assert len(set(opts)) == len(opts), command


def test_capacity_takes_now_and_edits_from_the_group() -> None:
    bad = run([*COMMANDS["capacity"], "--now", "yesterday"])
    assert bad.exit_code == 2 and "--now must be an RFC 3339 time" in bad.stderr
    before = run([*COMMANDS["capacity"], "-o", "json", "--max", "50"])
    after = run([*COMMANDS["capacity"], "-o", "json", "--max", "50", "--cordon", "node-1"])
    assert before.exit_code == after.exit_code == 0, (before.output, after.output)
    assert before.stdout != after.stdout  # cordoning a node changes what fits
