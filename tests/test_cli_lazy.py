"""The console entry point builds the app with the one command its first argument names, so a run imports
that command's module and not the others' (``import pysched.cli.main`` itself loads no command). Help
texts and usage errors are the same as the app with every command prints."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pysched.cli.main import COMMANDS, app, build_app
from tests.builders import python_lines

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
    assert python_lines(code)[-2:] == ["[]", "False False True"]


@pytest.mark.parametrize(("given", "kept"), [(None, "1"), ("3", "3")], ids=["unset", "set-by-user"])
def test_the_entry_point_starts_numpy_with_one_blas_thread(given: str | None, kept: str) -> None:
    """pysched calls no BLAS routine: the entry point asks OpenBLAS for one thread before numpy is imported
    (a user's own setting wins), so a run is one thread, not one more per core."""
    code = ("import atexit, os, sys\n"
            "def report():\n"
            "    tasks = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 1\n"
            "    print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules, tasks)\n"
            "atexit.register(report)\n"
            "sys.argv = ['pysched', 'plugins']\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    value, numpy_loaded, tasks = python_lines(code, env)[-1].split()
    assert (value, numpy_loaded) == (kept, "True")
    if given is None:
        assert tasks == "1"


def test_a_simulate_run_leaves_unused_libraries_unloaded() -> None:
    """What a plain run never uses would cost start-up time at every run: XML (only --junit writes it),
    pydantic (typer 0.29's option validators), the kubernetes client (live clusters only), hashlib and
    OpenSSL (generated names and DRA claim names only; the checkout's plugins/ folder is loaded), fractions
    and decimal (quantities in forms other than whole numbers with a suffix, DRA's CEL, durations), base64
    (an extender's tlsConfig data only)."""
    demo = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo.yaml")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print(sorted(n for n in ('xml.etree.ElementTree', 'pydantic', 'kubernetes',\n"
            "                                                  '_hashlib', 'fractions', 'decimal', 'base64')\n"
            "                                      if n in sys.modules)))\n"
            f"sys.argv = ['pysched', 'simulate', {demo!r}, '-o', 'json']\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    assert python_lines(code)[-1] == "[]"


@pytest.mark.parametrize("module", [m for _, m in COMMANDS] + ["main", "options"])
def test_command_modules_evaluate_their_annotations_where_defined(module: str) -> None:
    """typer reads a command's parameter annotations at every start: written as strings (``from __future__
    import annotations``) each is compiled and evaluated again, a tenth of a start's instructions."""
    source = (Path(__file__).resolve().parents[1] / "pysched" / "cli" / f"{module}.py").read_text()
    assert "from __future__ import annotations" not in source


def demo_as_json(tmp_path: Path) -> Path:
    """The demo fixture written again as one JSON ``List`` (a JSON-in run of the same cluster)."""
    import json

    import yaml

    demo = Path(__file__).resolve().parents[1] / "fixtures" / "demo.yaml"
    snapshot = tmp_path / "demo.json"
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                    "items": [d for d in yaml.safe_load_all(demo.read_text()) if d]}))
    return snapshot


def test_a_json_snapshot_run_with_json_output_imports_no_yaml_library(tmp_path: Path) -> None:
    """Nothing of a JSON-in, JSON-out run reads or writes YAML: PyYAML (whose import compiles a large regular
    expression) and yaml_rs stay unloaded."""
    snapshot = demo_as_json(tmp_path)
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print(sorted(n for n in ('yaml', 'yaml_rs') if n in sys.modules)))\n"
            f"sys.argv = ['pysched', 'simulate', {str(snapshot)!r}, '-o', 'json']\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    assert python_lines(code)[-1] == "[]"


def test_a_json_run_imports_no_yaml_reader_and_compiles_no_unused_pattern(tmp_path: Path) -> None:
    """A JSON-in, JSON-out run without warnings reads no block YAML (blockyaml stays unloaded) and compiles
    none of the patterns that only warnings, errors, usage errors, YAML output, DRA, durations or unusual
    quantities need: each is compiled at its first use (some 20 M instructions of every start)."""
    snapshot = demo_as_json(tmp_path)
    code = ("import atexit, sys\n"
            "def report():\n"
            "    from pysched import apimachinery, safetext\n"
            "    from pysched.cli import messages\n"
            "    from pysched.model import dracel, quantity\n"
            "    from pysched.report import serialize\n"
            "    compiled = [f.__name__ for f in (safetext._unsafe, messages._rules, serialize._invisible,\n"
            "                quantity._general, apimachinery._duration_part, dracel._semver, dracel._literal)\n"
            "                if f.cache_info().currsize]\n"
            "    print('pysched.snapshot.blockyaml' in sys.modules, compiled)\n"
            "atexit.register(report)\n"
            f"sys.argv = ['pysched', 'simulate', {str(snapshot)!r}, '-o', 'json', '-q']\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    assert python_lines(code)[-1] == "False []"


def test_a_run_freezes_what_its_imports_built_and_importing_the_cli_leaves_the_collector_as_found() -> None:
    """main() imports with the cyclic collector off and freezes what the imports built before the command
    runs (the collections the imports trigger would walk those objects again and again); importing
    pysched.cli.main alone gives the collector's state back."""
    demo = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo.yaml")
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 10_000))\n"
            f"sys.argv = ['pysched', 'simulate', {demo!r}, '-o', 'json', '-q']\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    assert python_lines(code)[-1] == "True True"
    for disabled in (False, True):
        code = ("import gc\n"
                + ("gc.disable()\n" if disabled else "")
                + "import pysched.cli.main\n"
                "print(gc.isenabled(), gc.get_freeze_count())\n")
        assert python_lines(code)[-1] == f"{not disabled} 0"


DRA_SCENARIO = Path(__file__).resolve().parent / "conformance" / "dra" / "001-dra.yaml"
DRA_MODULES = ("pysched.model.dra", "pysched.model.dracel", "pysched.plugins.dra_allocator")


@pytest.mark.parametrize(("which", "loaded"), [("demo-json", False), ("dra", True)])
def test_dra_machinery_is_imported_at_the_first_dra_object(which: str, loaded: bool, tmp_path: Path) -> None:
    """The DRA objects' parsing (pysched.model.dra, its CEL compiler) and the allocator are imported when
    a snapshot has DRA objects: a run without any leaves them unloaded, and a run with them prints what a
    run with every module imported beforehand prints."""
    import json

    import pysched.model.dra
    import pysched.plugins.dra_allocator  # noqa: F401 - the in-process run below: everything imported

    snapshot = str(demo_as_json(tmp_path) if which == "demo-json" else DRA_SCENARIO)
    args = ["simulate", snapshot, "-o", "json", "-q"]
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: print([n in sys.modules for n in {DRA_MODULES!r}]))\n"
            f"sys.argv = ['pysched', *{args!r}]\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    *printed, modules = python_lines(code)
    assert modules == str([loaded] * len(DRA_MODULES))
    code, whole = _out(app, args)
    assert code == 0 and json.loads("\n".join(printed)) == json.loads(whole)
    assert json.loads(whole)["bindings"]


@pytest.mark.parametrize("scenario", [None, "- expect:\n  - maxPending: 0\n"], ids=["plain", "scenario-expect"])
def test_the_expect_step_module_is_imported_only_for_a_scenario(scenario: str | None, tmp_path: Path) -> None:
    """pysched.report.expect (which registers the scenario files' ``expect:`` step) is imported when a
    --scenario file is given, before it is read: a plain run leaves it unloaded, a scenario's expect: step
    is checked as before."""
    demo = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo.yaml")
    args = ["simulate", demo, "-o", "json", "-q"]
    if scenario is not None:
        (tmp_path / "scenario.yaml").write_text(scenario)
        args += ["--scenario", str(tmp_path / "scenario.yaml")]
    code = ("import atexit, os, sys\n"
            "atexit.register(lambda: print('pysched.report.expect' in sys.modules))\n"
            f"sys.argv = ['pysched', *{args!r}]\n"
            "from pysched.cli.main import main\n"
            "main()\n")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == str(scenario is not None)
    if scenario is None:
        assert done.returncode == 0
    else:  # the demo leaves pods pending: maxPending 0 fails, exit 4, with the verdict on stderr
        assert done.returncode == 4 and "expect: FAIL at most 0 pending" in done.stderr
