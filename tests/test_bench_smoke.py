"""The benchmark script runs end to end on small clusters (a smoke test: no timing assertions)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench.py"


def run(tmp_path: Path, *args: str) -> list[list[str]]:
    proc = subprocess.run([sys.executable, str(BENCH), *args, "--keep", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:4] == ["workload", "nodes", "pods", "format"]
    return [line.replace("*", " ").split() for line in lines[1:]]


@pytest.mark.parametrize("workload", ["basic", "mixed", "dra"])
def test_bench_runs(workload: str, tmp_path: Path) -> None:
    rows = run(tmp_path, "--workload", workload, "--nodes", "120", "--pods", "200", "--running", "30", "--explain")
    assert [r[3] for r in rows] == ["yaml", "json"]  # block YAML and a JSON List, the same cluster
    for row in rows:
        assert row[0] == workload
        assert (int(row[1]), int(row[2])) == (120, 200)
        assert int(row[9]) == 200  # every pod of the generated workload fits
    assert rows[0][10:11] == ["explain"]
    assert (tmp_path / f"{workload}-120x200.yaml").read_text().startswith("apiVersion: v1\nitems:\n- ")


def test_scheduler_perf_families_run(tmp_path: Path) -> None:
    rows = run(tmp_path, "--workload", "all", "--scale", "0.004", "--formats", "json")
    names = [r[0] for r in rows]
    assert names == ["SchedulingBasic", "SchedulingNodeAffinity", "TopologySpreading", "SchedulingPodAntiAffinity",
                     "SchedulingPodAffinity", "SchedulingPreferredPodAffinity", "PreemptionBasic",
                     "SchedulingCSIPVs", "DaemonSetScale"]
    for row in rows:
        assert int(row[9]) == int(row[2]), row  # every measured pod is placed (preemption included)


def test_scaling_curve_reports_examined_nodes_and_cpu(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCH), "--scaling", "--scale", "0.07", "--formats", "json",
                           "--keep", str(tmp_path)], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    head = lines.index(next(line for line in lines if line.startswith("scaling")))
    assert lines[head].split() == ["scaling", "nodes", "pods", "examined", "sched", "CPU", "s", "us/examined"]
    rows = [line.split() for line in lines[head + 1:head + 6]]
    assert [int(r[1]) for r in rows] == [70, 140, 350, 700, 1050]
    for r in rows:
        assert r[0] == "SchedulingBasic/scaling" and int(r[2]) == 70
        assert int(r[3]) >= 70  # every cycle examined at least one node
        assert float(r[4]) > 0 and float(r[5]) > 0
    assert [line.split()[0] for line in lines[head + 6:]] == ["load-linearity", "load-linearity"]


def test_load_bench_times_every_format_and_linearity(tmp_path: Path) -> None:
    perf = tmp_path / "perf"
    perf.mkdir()
    proc = subprocess.run([sys.executable, str(BENCH), "--load", "--perf-dir", str(perf), "--linear-nodes", "40",
                           "--keep", str(tmp_path)], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["snapshot", "format", "MB"]
    assert sum("is absent, skipped" in line for line in lines) == 2
    ratios = [line for line in lines if line.startswith("linearity 4x/1x")]
    assert [r.split()[2] for r in ratios] == ["yaml", "json"]
    assert all("(at most x5:" in r for r in ratios)
    for fmt in ("yaml", "json", "stream.yaml"):  # every format written, gzip too, and readable
        assert (tmp_path / f"load-linear-160.{fmt}.gz").exists()
    from pysched.snapshot.loader import load_snapshot
    sizes = {len(load_snapshot([str(tmp_path / f"load-linear-40.{fmt}{gz}")]).pods)
             for fmt in ("yaml", "json", "stream.yaml") for gz in ("", ".gz")}
    assert sizes == {90}


def test_write_only_then_reuse_times_the_files_already_written(tmp_path: Path) -> None:
    args = ["--workload", "basic", "--nodes", "40", "--pods", "60", "--running", "10", "--formats", "json"]
    proc = subprocess.run([sys.executable, str(BENCH), *args, "--keep", str(tmp_path), "--write-only"],
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""  # nothing timed
    written = tmp_path / "basic-40x60.json"
    os.utime(written, ns=(0, 0))  # a stamp no rewrite keeps
    rows = run(tmp_path, *args, "--reuse")
    assert [r[:4] for r in rows] == [["basic", "40", "60", "json"]] and int(rows[0][9]) == 60
    assert written.stat().st_mtime_ns == 0  # timed as found, not written again


def test_block_yaml_is_written_as_kubectl_writes_it_without_anchors(tmp_path: Path) -> None:
    # the affinity and spread families share one labels dict between pods: PyYAML's dumper would write
    # it once as an anchor and then as aliases, which kubectl never does (and the fast reader refuses)
    proc = subprocess.run([sys.executable, str(BENCH), "--workload", "TopologySpreading", "--workload",
                           "SchedulingPodAffinity", "--scale", "0.004", "--formats", "yaml", "--write-only",
                           "--keep", str(tmp_path)], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    written = sorted(tmp_path.glob("*.yaml"))
    assert [p.name.split("-")[0] for p in written] == ["SchedulingPodAffinity", "TopologySpreading"]
    for path in written:
        text = path.read_text()
        assert "matchLabels:" in text and " &" not in text and " *" not in text, path.name


def test_cli_bench_times_simulate_end_to_end_against_the_targets(tmp_path: Path) -> None:
    perf = tmp_path / "perf"
    perf.mkdir()
    proc = subprocess.run([sys.executable, str(BENCH), "--cli", "--repeat", "2", "--perf-dir", str(perf),
                           "--cli-sizes", "60x80", "--running", "20", "--keep", str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert sum("is absent, skipped" in line for line in lines) == 2
    calib = next(line for line in lines if line.startswith("calib s"))
    assert len(calib.split(":")[1].split()) == 2  # one calibration per round
    interpreter = next(line for line in lines if line.startswith("python "))
    assert sys.executable in interpreter and "pysched from " in interpreter and "__init__.py" in interpreter
    head = next(i for i, line in enumerate(lines) if line.startswith("cluster"))
    assert lines[head].split() == ["cluster", "format", "MB", "best", "s", "median", "s", "cpu", "s", "target", "s",
                                   "best", "median", "md5"]
    rows = [line.split() for line in lines[head + 1:]]
    assert [(r[0], r[1]) for r in rows] == [("mixed-60x80", "json"), ("mixed-60x80", "yaml")]
    for r in rows:
        assert 0 < float(r[3]) <= float(r[4])  # best <= median
        assert r[6:9] == ["0.00", "-", "-"]  # no real-scheduler figure for this size: no verdict
    assert rows[0][9] == rows[1][9]  # both formats print the same bytes
