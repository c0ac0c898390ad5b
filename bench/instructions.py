#!/usr/bin/env python3
"""Instructions, not seconds, of a whole ``pysched`` run, and of chosen functions inside it.

    python bench/instructions.py FILE [--phase MODULE:QUALNAME ...] [--python PY] [--seed 0]
                                      [-- SIMULATE ARGS]

Runs ``pysched simulate FILE -o json`` (or ``simulate FILE`` followed by the arguments after ``--``) in a
fresh interpreter under valgrind's callgrind, with this checkout's code, and prints the instructions of the
whole process (interpreter start, imports, load, scheduling, output) and the md5 of what it printed. This
machine's speed drifts by a third within minutes, so a change of a few per cent shows in these counts and
not in seconds; they repeat to within a few million with ``PYTHONHASHSEED`` fixed (``--seed``).

``--phase module:Qualified.name`` (up to six) also gives each named function's inclusive instructions over
all its calls: the function is called from inside a distinct C builtin of the standard library (starmap,
reduce, takewhile, dropwhile, filterfalse, accumulate), whose inclusive cost callgrind_annotate reports.
The wrapper adds a few thousand instructions per call, so a function called thousands of times reads high,
and the modules a phase names are imported before pysched's own imports, which adds 10-30 M instructions
to the total: read the total of a run without ``--phase``.
For example the scheduling loop alone: ``--phase pysched.scheduler.simulation:Simulation.run``.

``--python`` chooses the interpreter (default: this one); a virtual environment with ``pip install .``
holds the dependencies without the editable install's import finder. Needs valgrind
(``apt-get install valgrind``); a run of the mixed 1,000 x 2,000 cluster takes about 40 s.
"""

from __future__ import annotations

# The measured process runs this file too (``--child``): at module level it imports only what the
# interpreter or pysched imports anyway, so that the count is pysched's; the rest is imported where used.
import functools
import importlib
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Fn = Callable[..., Any]


def _in_starmap(fn: Fn) -> Fn:
    return lambda *a, **k: next(itertools.starmap(lambda: fn(*a, **k), [()]))


def _in_reduce(fn: Fn) -> Fn:
    return lambda *a, **k: functools.reduce(lambda _x, _y: fn(*a, **k), [0, 0])


def _in_predicate(walk: Callable[[Fn, list[int]], Any], keep: bool) -> Callable[[Fn], Fn]:
    def wrap(fn: Fn) -> Fn:
        def wrapped(*a: Any, **k: Any) -> Any:
            box: list[Any] = []

            def predicate(_: int) -> bool:
                box.append(fn(*a, **k))
                return keep

            for _ in walk(predicate, [0]):
                pass
            return box[0]
        return wrapped
    return wrap


def _in_accumulate(fn: Fn) -> Fn:
    def wrapped(*a: Any, **k: Any) -> Any:
        box: list[Any] = []

        def step(_x: int, _y: int) -> int:
            box.append(fn(*a, **k))
            return 0

        for _ in itertools.accumulate([0, 0], step):
            pass
        return box[0]
    return wrapped


#: (the C function callgrind names, the wrapper that calls a function from inside it), one per phase
MARKERS: list[tuple[str, Callable[[Fn], Fn]]] = [
    ("starmap_next", _in_starmap),
    ("functools_reduce", _in_reduce),
    ("takewhile_next", _in_predicate(itertools.takewhile, True)),
    ("dropwhile_next", _in_predicate(itertools.dropwhile, True)),
    ("filterfalse_next", _in_predicate(itertools.filterfalse, False)),
    ("accumulate_next", _in_accumulate),
]


def wrap_phase(target: str, marker: Callable[[Fn], Fn]) -> None:
    """Replace the function ``module:Qualified.name`` by the marker's wrapper of it."""
    module, _, qualname = target.partition(":")
    if not module or not qualname:
        raise SystemExit(f"--phase {target!r}: expected module:Qualified.name")
    owner: Any = importlib.import_module(module)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, name, marker(getattr(owner, name)))


def child(phases: list[str], argv: list[str]) -> None:
    """In the measured process: wrap the phases, then run the command line as ``pysched`` would."""
    for target, (_, marker) in zip(phases, MARKERS, strict=False):
        wrap_phase(target, marker)
    sys.argv = ["pysched", *argv]
    from pysched.cli.main import main

    main()


def phase_counts(annotated: str, phases: list[str]) -> dict[str, int]:
    """Each phase's inclusive instructions, read off ``callgrind_annotate --inclusive=yes`` output."""
    import re

    counts: dict[str, int] = {}
    for target, (cname, _) in zip(phases, MARKERS, strict=False):
        m = re.search(rf"^\s*([\d,]+)\s.*\b{cname}\b", annotated, re.M)
        counts[target] = int(m.group(1).replace(",", "")) if m else 0
    return counts


def measure(python: str, argv: list[str], phases: list[str], seed: str) -> tuple[int, dict[str, int], str]:
    """(whole-process instructions, each phase's, md5 of the output) of one run under callgrind."""
    import hashlib
    import os
    import subprocess
    import tempfile

    sys.path.insert(0, str(ROOT / "bench"))
    from load_instructions import callgrind_total  # (next to this file)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, __file__, "--child",
               *phases, "--", *argv]
        proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr.decode(errors="replace")[-4000:])
            raise SystemExit(f"`pysched {' '.join(argv)}` exited {proc.returncode} under valgrind")
        total = callgrind_total(out, " ".join(argv))
        annotated = ""
        if phases:
            # (every function listed: by default only those making up 99 % of the total are)
            annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                                       capture_output=True, text=True, check=True).stdout
    return total, phase_counts(annotated, phases), hashlib.md5(proc.stdout).hexdigest()


def main() -> None:
    args = sys.argv[1:]
    extra: list[str] = []
    if "--" in args:  # what follows goes to `pysched simulate FILE` unread
        args, extra = args[:args.index("--")], args[args.index("--") + 1:]
    if args[:1] == ["--child"]:  # (the measured process: no argument parser imported)
        child(args[1:], extra)
        return
    import argparse
    import shutil

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", help="the snapshot to simulate")
    ap.add_argument("--phase", action="append", default=[], help="module:Qualified.name (up to six)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to run pysched with")
    ap.add_argument("--seed", default="0", help="PYTHONHASHSEED of the run")
    opts = ap.parse_args(args)
    if len(opts.phase) > len(MARKERS):
        ap.error(f"at most {len(MARKERS)} --phase")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    argv = ["simulate", opts.file, *(extra or ["-o", "json"])]
    total, phases, md5 = measure(opts.python, argv, opts.phase, opts.seed)
    print(f"pysched {' '.join(argv)}: {total:,d} instructions, output md5 {md5}")
    for target, n in phases.items():
        print(f"  {target}: {n:,d} ({100 * n / total:.1f} %)")


if __name__ == "__main__":
    main()
