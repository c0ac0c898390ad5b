"""Run the workloads scenarios in-process exactly as
``pysched simulate NNN-workloads.yaml [--scenario NNN-workloads.scenario.yaml] [ARGS] --tie-break name -o json``."""

from __future__ import annotations

import json
from pathlib import Path

from pysched.controllers import ExpansionOptions, expand_cluster, parse_scenario
from pysched.framework.config import load_config
from pysched.plugins import in_tree_registry
from pysched.report.serialize import to_json
from pysched.scheduler.simulation import Simulation, SimulationOptions
from pysched.snapshot.loader import load_snapshot
from tests.conformance.harness import HERE
from tests.conformance.workloads_compare import compare, load_expected

WORKLOADS = HERE / "workloads"


def cases() -> list[tuple[str, Path]]:
    return [(p.name[: -len(".yaml")], p) for p in sorted(WORKLOADS.glob("*-workloads.yaml"))]


def options_of(snapshot: Path) -> ExpansionOptions:
    case = json.loads(snapshot.with_name(snapshot.name.replace(".yaml", ".case.json")).read_text())
    args = list(case.get("args") or [])
    opts = ExpansionOptions()
    while args:
        a = args.pop(0)
        if a == "--run-cronjobs":
            opts.run_cronjobs = True
        elif a == "--now":
            opts.now = args.pop(0)
        else:
            raise ValueError(f"unexpected case argument {a!r}")
    return opts


def simulate_json(snapshot: Path, batched: bool = True) -> dict:
    registry = in_tree_registry()
    cfg = load_config(None, registry)
    cluster = load_snapshot([str(snapshot)])
    scen = snapshot.with_name(snapshot.name.replace(".yaml", ".scenario.yaml"))
    edits = parse_scenario(str(scen)).edits if scen.exists() else []
    world = expand_cluster(cluster, edits, options_of(snapshot))
    result = Simulation(world, cfg, registry, SimulationOptions(tie_break="name", batched=batched)).run()
    return json.loads(to_json(result.to_dict()))


def run_case(snapshot: Path, batched: bool = True) -> tuple[dict[str, tuple[int, int]], list[str]]:
    expected = load_expected(snapshot.with_name(snapshot.name.replace(".yaml", ".expected.json.gz")))
    return compare(expected, simulate_json(snapshot, batched))


def main() -> None:  # pragma: no cover - python -m tests.conformance.workloads_harness
    totals: dict[str, list[int]] = {}
    for stem, snap in cases():
        try:
            counts, notes = run_case(snap)
        except Exception as e:
            import traceback
            traceback.print_exc()
            counts, notes = {}, [f"crash: {type(e).__name__}: {e}"]
        for k, (ok, n) in counts.items():
            t = totals.setdefault(k, [0, 0])
            t[0] += ok
            t[1] += n
        print(f"{'ok  ' if not notes else 'FAIL'} {stem} " + " ".join(f"{k} {a}/{b}" for k, (a, b) in counts.items()))
        for n in notes[:12]:
            print("     ", n)
    w = totals.get("workloads", [0, 0])
    print("agreement: " + ", ".join(f"{a}/{b} {k} ({100 * a / max(b, 1):.0f}%)" for k, (a, b) in totals.items()))
    del w


if __name__ == "__main__":
    main()
