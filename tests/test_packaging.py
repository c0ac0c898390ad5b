"""Packaging promises: one version, typed API, the kubernetes client only for live clusters, goldens
tolerant of another typer/rich layout."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pysched
import pysched.snapshot
from pysched.cli.live_cmd import LIVE_EXTRA_MISSING
from pysched.cli.main import app
from tests.golden import words

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "fixtures" / "demo.yaml")


def test_version_has_one_source() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "pysched.__version__"}
    out = CliRunner().invoke(app, ["--version"])
    assert out.exit_code == 0
    assert out.stdout.startswith(f"pysched {pysched.__version__} ")
    assert pysched.K8S_VERSION in out.stdout


def test_typed_marker_is_shipped() -> None:
    assert (ROOT / "pysched" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["pysched"]


def test_kubernetes_is_an_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("kubernetes") for d in project["dependencies"])
    assert any(d.startswith("kubernetes") for d in project["optional-dependencies"]["live"])


@pytest.fixture
def no_kubernetes(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the live extra were not installed: importing kubernetes fails."""
    for name in list(sys.modules):
        if name == "kubernetes" or name.startswith("kubernetes.") or name == "pysched.snapshot.live":
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # type: ignore[arg-type]
    # `from pysched.snapshot import live` finds an imported submodule as the package's attribute first
    monkeypatch.delattr(pysched.snapshot, "live", raising=False)


def test_snapshots_need_no_kubernetes(no_kubernetes: None) -> None:
    out = CliRunner().invoke(app, ["simulate", DEMO, "-o", "json"])
    assert out.exit_code == 0, out.output
    assert "kubernetes" not in sys.modules or sys.modules["kubernetes"] is None


@pytest.mark.parametrize("args", [["simulate"], ["snapshot", "-o", "-"]], ids=["simulate", "snapshot"])
def test_live_without_the_extra_is_a_clear_error(no_kubernetes: None, args: list[str]) -> None:
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 2, out.output
    assert f"error: {LIVE_EXTRA_MISSING}" in out.stderr
    assert "Traceback" not in out.output


@pytest.mark.parametrize(("a", "b", "same"), [
    ("Options:\n  --max-rows <int>  Rows per table;\n    0: all.\n", "Options:\n  --max-rows <int>  Rows per\n  table; 0: all.", True),
    ("┏━━━━┓\n┃ a  ┃\n┗━━━━┛\n", "+----+\n| a  |\n+----+\n", False),
    ("╭──╮\n│ a │\n╰──╯", "a", True),
    ("--max-rows <int>", "--max-rows <int range>", False),
], ids=["rewrapped", "ascii-box-is-words", "box-drawing-ignored", "changed-word"])
def test_golden_words_ignore_layout_only(a: str, b: str, same: bool) -> None:
    assert (words(a) == words(b)) == same


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = next(line for line in ci.splitlines() if line.startswith("pip install -e '.[test]'"))
    assert f"```bash\n{command}\n```" in readme
    assert "pytest -n auto" in command and "ruff check ." in command and "mypy" in command


def test_readme_layer_picture_matches_the_enforced_layers() -> None:
    from tests.test_layers import LAYERS

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    picture = readme.split("## Development\n\n```\n", 1)[1].split("```", 1)[0]
    drawn = [line.split()[0] for line in picture.splitlines() if line and not line.startswith(" ")]
    assert drawn == list(reversed(LAYERS))
