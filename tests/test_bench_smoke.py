"""The benchmark script runs end to end on a small cluster (a smoke test: no timing assertions)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"


@pytest.mark.parametrize("workload", ["basic", "mixed", "dra"])
def test_bench_runs(workload: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--workload", workload, "--nodes", "120", "--pods", "200",
                           "--running", "30", "--explain", "--keep", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.strip().splitlines()[-1].split()
    assert row[0] == workload
    assert (int(row[1]), int(row[2])) == (120, 200)
    assert int(row[8]) == 200  # every pod of the generated workload fits
    assert "explain" in proc.stdout
