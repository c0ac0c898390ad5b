"""The options the commands share behave the same in every command that has them (cli/options.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pysched.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")
COMMANDS = {
    "simulate": ["simulate", DEMO],
    "explain": ["explain", "shop/web-1", "-f", DEMO],
    "diff": ["diff", "default", "default", "-f", DEMO],
    "diff --snapshot-b": ["diff", "-f", DEMO, "--snapshot-b", DEMO],
}


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
