"""The console entry point builds the app with the one command its first argument names, so a run imports
that command's module and not the others' (``import pysched.cli.main`` itself loads no command). Help
texts and usage errors are the same as the app with every command prints."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from pysched.cli.main import COMMANDS, app, build_app

ENV = {"COLUMNS": "80", "LINES": "40", "NO_COLOR": None, "FORCE_COLOR": None}


def _out(a: object, args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(a, args, prog_name="pysched", terminal_width=80, env=ENV)  # type: ignore[arg-type]
    return r.exit_code, r.output


@pytest.mark.parametrize("name", [n for n, _ in COMMANDS])
def test_one_command_app_prints_what_the_full_app_prints(name: str) -> None:
    one = build_app(name)
    for args in ([name, "--help"], [name, "--no-such-option"], [name, "-o", "xml"]):
        assert _out(one, args) == _out(app, args), args


def test_a_run_imports_only_its_own_command() -> None:
    code = ("import sys\n"
            "import pysched.cli.main as m\n"
            "before = set(sys.modules)\n"
            "sys.argv = ['pysched', 'plugins']\n"
            "try:\n"
            "    m.build_app('plugins')(['plugins'], standalone_mode=False)\n"
            "finally:\n"
            "    print(sorted(n for n in before if n.startswith('pysched.cli.') and n.endswith('_cmd')))\n"
            "    print('pysched.scheduler.simulation' in before, 'pysched.cli.capacity_cmd' in sys.modules,\n"
            "          'pysched.cli.plugins_cmd' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["[]", "False False True"], done.stdout
