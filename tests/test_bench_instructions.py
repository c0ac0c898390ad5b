"""bench/instructions.py: the phase wrappers return what the function returns and are named by callgrind's
C functions; a run under valgrind counts the whole process and each phase, and prints what pysched prints."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "instructions.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_instructions", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("index", range(6), ids=lambda i: f"marker{i}")
def test_each_marker_calls_the_function_once_and_returns_its_value(index: int) -> None:
    calls: list[tuple] = []

    def fn(*a: object, **k: object) -> str:
        calls.append((a, k))
        return "result"

    _, marker = load_script().MARKERS[index]
    assert marker(fn)(1, key=2) == "result"
    assert calls == [((1,), {"key": 2})]


def test_phase_counts_read_the_markers_inclusive_lines() -> None:
    script = load_script()
    annotated = ("1,000,000 (100.0%)  ???:main [/usr/bin/python3]\n"
                 "  250,000 (25.0%)  ./Modules/itertoolsmodule.c:starmap_next [/usr/bin/python3]\n"
                 "   40,000 ( 4.0%)  ./Modules/_functoolsmodule.c:functools_reduce [/usr/bin/python3]\n")
    assert script.phase_counts(annotated, ["a:f", "b:g", "c:h"]) == {"a:f": 250_000, "b:g": 40_000, "c:h": 0}


def test_a_phase_must_name_module_and_function() -> None:
    with pytest.raises(SystemExit, match=r"module:Qualified\.name"):
        load_script().wrap_phase("pysched.scheduler.simulation", lambda fn: fn)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_run_counts_the_process_and_its_phases_and_prints_the_same_output() -> None:
    demo = str(ROOT / "fixtures" / "demo.yaml")
    proc = subprocess.run([sys.executable, str(SCRIPT), demo, "--phase",
                           "pysched.scheduler.simulation:Simulation.run"],
                          capture_output=True, text=True, check=False, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    head, phase = proc.stdout.splitlines()
    direct = subprocess.run([sys.executable, "-m", "pysched.cli.main", "simulate", demo, "-o", "json"],
                            capture_output=True, check=True, cwd=ROOT).stdout
    total = int(head.split(": ")[1].split(" instructions")[0].replace(",", ""))
    assert head.endswith(f"output md5 {hashlib.md5(direct).hexdigest()}")
    run = int(phase.split(": ")[1].split(" (")[0].replace(",", ""))
    assert 0 < run < total
