#!/usr/bin/env python3
"""Instructions of ``load_snapshot`` alone, and validation's share of them (issue 17's instrument).

    python bench/load_instructions.py [--dir DIR] [--snapshots basic,mixed] [--formats json,yaml,...]
                                      [--modes warn,ignore] [--seed 0] [--jobs 1]

Each row loads one file in a fresh interpreter under valgrind's callgrind with instrumentation off
(``--instr-atstart=no``); a tiny C library, compiled here once from valgrind's own ``callgrind.h`` and
called through ctypes, switches it on right before ``load_snapshot([FILE], validate=MODE)`` and off right
after. Interpreter start and imports are therefore not counted: the figure is the load and nothing else
(reading, gunzip, parsing, validation, admission, the collector's work during the load). Instruction
counts do not depend on the machine's load, unlike CPU seconds; with ``PYTHONHASHSEED`` fixed (``--seed``,
default 0) they repeat to within a few million.

Validation's cost is ``warn`` minus ``ignore`` (``--validate=warn``, the default, against
``--validate=ignore``, which skips the schema check, names and label values); its share is that cost over
the ``warn`` load. ``strict`` costs the same as ``warn`` on a clean snapshot (the same checks; only what is
done with an issue differs).

The files are the perf snapshots of ``../shared/perf`` in every format users have, written by
``bench.write_formats`` (as ``bench.py --load`` does) into ``--dir`` and reused when already there: block
YAML (``kind: List``), a JSON ``List``, the YAML stream of (mostly) JSON documents, and gzip of each.
Needs valgrind and a C compiler (``apt-get install valgrind gcc``). A load takes about a minute under
callgrind: the whole table (2 snapshots x 6 formats x 2 modes) is some 25 minutes of one core.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402 - the formats' writer, next to this file

FORMATS = bench.LOAD_FORMATS  # yaml, json, yaml-stream, and their .gz
SWITCH_C = """
#include <valgrind/callgrind.h>
void pysched_instr_on(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void pysched_instr_off(void) { CALLGRIND_STOP_INSTRUMENTATION; }
"""
CHILD = r"""
import ctypes, sys
from pysched.snapshot.loader import load_snapshot
switch = ctypes.CDLL(sys.argv[3])
on, off = switch.pysched_instr_on, switch.pysched_instr_off
on()
cluster = load_snapshot([sys.argv[1]], validate=sys.argv[2])
off()
print(len(cluster.nodes), len(cluster.pods), len(cluster.warnings))
"""


def switch_library(folder: str) -> str:
    """The compiled on/off switch (a shared library), built once into ``folder``."""
    lib = os.path.join(folder, "pysched_instr_switch.so")
    if not os.path.exists(lib):
        src = os.path.join(folder, "pysched_instr_switch.c")
        Path(src).write_text(SWITCH_C)
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise SystemExit("a C compiler (cc or gcc) is needed to build the instrumentation switch")
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


def load_instructions(path: str, mode: str, lib: str, seed: str) -> int:
    """Instructions callgrind counted between the switch's on and off: one ``load_snapshot`` of ``path``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no",
                               f"--callgrind-out-file={out}", sys.executable, "-c", CHILD, path, mode, lib],
                              capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"the load of {path} ({mode}) failed under valgrind")
        return callgrind_total(out, path)


def callgrind_total(out: str, what: str) -> int:
    """The instruction total of callgrind's output file ``out`` (of a run of ``what``)."""
    text = Path(out).read_text()
    m = re.search(r"^totals:\s*(\d+)", text, re.M) or re.search(r"^summary:\s*(\d+)", text, re.M)
    if m is None:
        raise SystemExit(f"no instruction count in callgrind's output for {what}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "pysched-load-formats"),
                    help="where the formats are written (and reused)")
    ap.add_argument("--perf-dir", default=bench.PERF, help="where the perf snapshots are")
    ap.add_argument("--snapshots", default="basic,mixed")
    ap.add_argument("--formats", default=",".join(FORMATS), help=f"comma-separated, of {', '.join(FORMATS)}")
    ap.add_argument("--modes", default="warn,ignore", help="--validate modes; the share needs warn and ignore")
    ap.add_argument("--seed", default="0", help="PYTHONHASHSEED of the loads")
    ap.add_argument("--jobs", type=int, default=1, help="loads run at once (each takes one core)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    os.makedirs(args.dir, exist_ok=True)
    lib = switch_library(args.dir)
    formats, modes = args.formats.split(","), args.modes.split(",")
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise SystemExit(f"unknown format(s): {', '.join(sorted(unknown))}")
    runs: list[tuple[str, str, str, str]] = []
    for base in args.snapshots.split(","):
        gz = os.path.join(args.perf_dir, f"{base}-5000x10000.yaml.gz")
        if not os.path.exists(gz):
            print(f"perf/{base}-5000x10000: {gz} is absent, skipped", flush=True)
            continue
        files = bench.write_formats(lambda gz=gz: bench.perf_docs(gz), os.path.join(args.dir, f"load-{base}"))
        runs.extend((base, fmt, files[fmt], mode) for fmt in formats for mode in modes)
    share = {"warn", "ignore"} <= set(modes)
    print(f"{'snapshot':8} {'format':15} " + " ".join(f"{m + ' Ir':>15}" for m in modes)
          + (f" {'validation Ir':>15} {'share':>7}" if share else ""), flush=True)
    got: dict[tuple[str, str, str], int] = {}
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:  # rows printed as they are complete, in order
        for (base, fmt, _, mode), n in zip(runs, pool.map(lambda r: load_instructions(r[2], r[3], lib, args.seed),
                                                           runs), strict=True):
            got[base, fmt, mode] = n
            if mode != modes[-1]:
                continue
            line = f"{base:8} {fmt:15} " + " ".join(f"{got[base, fmt, m]:15,d}" for m in modes)
            if share:
                warn, ignore = got[base, fmt, "warn"], got[base, fmt, "ignore"]
                line += f" {warn - ignore:15,d} {100 * (warn - ignore) / warn:6.2f}%"
            print(line, flush=True)

if __name__ == "__main__":
    main()
